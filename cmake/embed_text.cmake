# embed_text.cmake — writes OUT, a C file defining `const char VAR[]` with
# the bytes of IN (a text file), so a document ships inside the program.
# Run by loom_embed_text (CMakeLists.txt) as cmake -P.
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" n)
math(EXPR bytes "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
file(WRITE ${OUT} "/* generated from ${IN} by cmake/embed_text.cmake; do not edit */\n#include <stddef.h>\nconst char ${VAR}[] = {${body}0x00};\nconst size_t ${VAR}_len = ${bytes};\n")
