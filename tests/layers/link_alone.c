/* Links one kbench library whole (every object, --whole-archive) against
 * only the libraries it declares in CMake: an undefined reference, a call
 * into a layer it does not declare, fails the link (tests/layers/
 * CMakeLists.txt). The program itself does nothing. */
int main(void) { return 0; }
