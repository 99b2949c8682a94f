#!/bin/sh
# strip cuobjdump -sass output to one instruction per line
sed -E 's@^\s+/\*[0-9a-f]{4}\*/\s+@@; s@\s*/\* 0x[0-9a-f]+ \*/@@; s@ ;$@@' "$1" | grep -vE "^\s*/\* 0x|^\s*$" | grep -v "^\s*\.\|Function\|Fatbin\|code for\|arch =\|host =\|compile_size\|^\s*-" | grep -v "^NOP"
