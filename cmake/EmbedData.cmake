# vramplan_embed_file(<out.cpp> <symbol> <input>): writes a .cpp that defines
#   extern const char <symbol>[]; extern const unsigned long long <symbol>_size;
# holding the bytes of <input>, so data files (presets, GPU catalogue) ship inside the binary/WASM
# without any file I/O at run time. Regenerated whenever the input changes.
function(vramplan_embed_file out_cpp symbol input)
  add_custom_command(
    OUTPUT ${out_cpp}
    COMMAND ${CMAKE_COMMAND} -DINPUT=${input} -DOUTPUT=${out_cpp} -DSYMBOL=${symbol}
            -P ${PROJECT_SOURCE_DIR}/cmake/EmbedDataScript.cmake
    DEPENDS ${input} ${PROJECT_SOURCE_DIR}/cmake/EmbedDataScript.cmake
    COMMENT "Embedding ${input} as ${symbol}"
    VERBATIM)
endfunction()

# vramplan_build_id(<out.cpp> <files...>): writes `const char vramplan_build_id[]`, the first 12 hex
# digits of a SHA-256 over the given files' contents, regenerated whenever one of them changes.
function(vramplan_build_id out_cpp)
  add_custom_command(
    OUTPUT ${out_cpp}
    COMMAND ${CMAKE_COMMAND} -DOUTPUT=${out_cpp} "-DFILES=${ARGN}" -P ${PROJECT_SOURCE_DIR}/cmake/BuildIdScript.cmake
    DEPENDS ${ARGN} ${PROJECT_SOURCE_DIR}/cmake/BuildIdScript.cmake
    COMMENT "Hashing core sources for the build id"
    VERBATIM)
endfunction()
