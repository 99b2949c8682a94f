#!/bin/sh
# one instruction per line with its address
grep -E "^\s+/\*[0-9a-f]{4}\*/" "$1" | sed -E 's@^\s+/\*([0-9a-f]{4})\*/\s+@\1 @; s@\s*/\* 0x[0-9a-f]+ \*/@@; s@ ;$@@'
