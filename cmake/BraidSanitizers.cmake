# Sanitizer builds. They apply to everything in the build directory (library, tools,
# tests), so a sanitized test binary never links an unsanitized library.
if(BRAID_SANITIZE)
  set(_flags -fsanitize=${BRAID_SANITIZE} -fno-omit-frame-pointer -g)
  if(BRAID_SANITIZE MATCHES "undefined")
    # A UBSan finding must fail the test, not scroll by.
    list(APPEND _flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_flags}>")
  add_link_options(-fsanitize=${BRAID_SANITIZE})
endif()
