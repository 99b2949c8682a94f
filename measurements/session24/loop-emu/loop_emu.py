# Emulates bwd_loop's index math (norm_tuned_bwd.cuh) thread by thread, with numpy numerics,
# against a reference: every (row, pack) read in both passes and written once, smem in bounds,
# dw = sum over slots of the partial rows, dx and dw equal to the reference.
import numpy as np, itertools, random, math
def cdiv(a,b): return -(-a//b)
def run(M,N,VEC,tpr,R,U,S,LN,rng):
    Q=VEC//4; nsl=N//VEC; K=cdiv(nsl,tpr)
    smem=np.full(R*K*Q*tpr*4, np.nan, dtype=np.float64)   # float4 planes flattened
    x=rng.standard_normal((M,N)); dy=rng.standard_normal((M,N)); w=rng.standard_normal(N)
    mu=x.mean(1) if LN else np.zeros(M); rs=1/np.sqrt(((x-mu[:,None])**2).mean(1)+1e-5)
    dx=np.full((M,N),np.nan); ws=np.full((S,N),np.nan)
    reads1=np.zeros((M,nsl),int); reads2=np.zeros((M,nsl),int); writes=np.zeros((M,nsl),int)
    ngroups=cdiv(M,R)
    def su(r,i,q,tx):
        idx=((r*K+i)*Q+q)*tpr+tx
        assert 0<=idx<R*K*Q*tpr
        return idx*4
    for b in range(S):
        for ty in range(R):
            for tx in range(tpr):
                for i in range(K):
                    for q in range(Q): smem[su(ty,i,q,tx):su(ty,i,q,tx)+4]=0
        g=b
        while g<ngroups:
            # pass 1 for all threads, then the reduction, then pass 2
            s=np.zeros((R,2)); stats=[]
            for ty in range(R):
                row=g*R+ty; ok=row<M; cnt=nsl if ok else 0
                for tx in range(tpr):
                    k0=tx;i0=0
                    while k0<cnt:
                        for u in range(U):
                            k=k0+u*tpr
                            if k<cnt:
                                i=i0+u; assert k==tx+i*tpr and i<K
                                reads1[row,k]+=1
                                cols=slice(k*VEC,(k+1)*VEC)
                                xh=(x[row,cols]-mu[row])*rs[row]; gv=dy[row,cols]*w[cols]
                                s[ty,0]+=(gv*xh).sum(); s[ty,1]+=gv.sum()
                                c=dy[row,cols]*xh
                                for q in range(Q):
                                    o=su(ty,i,q,tx); smem[o:o+4]+=c[4*q:4*q+4]
                        k0+=tpr*U; i0+=U
            for ty in range(R):
                row=g*R+ty; ok=row<M; cnt=nsl if ok else 0
                mgx=s[ty,0]/N; mg=s[ty,1]/N if LN else 0
                for tx in range(tpr):
                    k0=tx
                    while k0<cnt:
                        for u in range(U):
                            k=k0+u*tpr
                            if k<cnt:
                                reads2[row,k]+=1; writes[row,k]+=1
                                cols=slice(k*VEC,(k+1)*VEC)
                                xh=(x[row,cols]-mu[row])*rs[row]
                                dx[row,cols]=rs[row]*(dy[row,cols]*w[cols]-mg-xh*mgx)
                        k0+=tpr*U
            g+=S
        for tx in range(tpr):
            i=0;k=tx
            while k<nsl:
                for q in range(Q):
                    t=smem[su(0,i,q,tx):su(0,i,q,tx)+4].copy()
                    for r in range(1,R): t+=smem[su(r,i,q,tx):su(r,i,q,tx)+4]
                    # ws[k*Q+q] as float4 of slot b
                    ws[b,(k*Q+q)*4:(k*Q+q)*4+4]=t
                i+=1;k+=tpr
    assert (reads1==1).all() and (reads2==1).all() and (writes==1).all()
    assert not np.isnan(ws).any()
    dw=ws.sum(0)
    xh=(x-mu[:,None])*rs[:,None]; g=dy*w
    mgx=(g*xh).mean(1,keepdims=True); mg=g.mean(1,keepdims=True) if LN else 0
    dxr=rs[:,None]*(g-mg-xh*mgx); dwr=(dy*xh).sum(0)
    assert np.allclose(dx,dxr,atol=1e-9), np.abs(dx-dxr).max()
    assert np.allclose(dw,dwr,atol=1e-8), np.abs(dw-dwr).max()
rng=np.random.default_rng(1)
n=0
for VEC in (8,4):
    for N in (VEC, 3*VEC, 13*VEC, 64*VEC, 100*VEC):
        for tpr in (1,2,8,32,64):
            if tpr*1 > 2**math.ceil(math.log2(max(1,N//VEC))) : continue
            for R in (1,2,3,4):
                for U in (2,4,8):
                    for M in (1,2,5,9):
                        for S in (1,2,3,7):
                            if S>cdiv(M,R): continue
                            run(M,N,VEC,tpr,R,U,S,bool(n%2),rng); n+=1
print("cases", n, "ok")
