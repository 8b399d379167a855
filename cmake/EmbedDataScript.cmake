# Script mode: converts INPUT into a C++ byte array named SYMBOL in OUTPUT (NUL-terminated).
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
file(WRITE "${OUTPUT}" "// Generated from ${INPUT} by cmake/EmbedDataScript.cmake. Do not edit.\n"
  "extern const unsigned char ${SYMBOL}[];\nextern const unsigned long long ${SYMBOL}_size;\n"
  "const unsigned char ${SYMBOL}[] = {\n${bytes}0x00};\n"
  "const unsigned long long ${SYMBOL}_size = ${size};\n")
