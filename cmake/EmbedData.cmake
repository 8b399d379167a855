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
