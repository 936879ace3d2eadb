# Turns a file into a C array: cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake
# (the service serves its stylesheet and script from memory: one binary, no files to install).
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR len "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f],0x[0-9a-f][0-9a-f])" "\\1\n" bytes "${bytes}")
file(WRITE "${OUT}" "/* Generated from ${NAME} by embed.cmake: do not edit. */\n#include <stddef.h>\nconst unsigned char ${NAME}[] = {\n${bytes}0x00};\nconst size_t ${NAME}_len = ${len};\n")
