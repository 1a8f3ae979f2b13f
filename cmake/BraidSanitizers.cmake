# Sanitizer builds. They apply to everything in the build directory (library, tools,
# tests), so a sanitized test binary never links an unsanitized library.
if(BRAID_SANITIZE)
  # -O1 -g1 override the build type's -O2 -g (these options come later on the command
  # line): -O1 is the level the sanitizers' authors recommend (fast enough to run, no
  # findings optimised away), and line tables are all a report's stack trace needs. Together
  # they halve the compile time of a sanitizer build, which CI does twice.
  set(_flags -fsanitize=${BRAID_SANITIZE} -fno-omit-frame-pointer -O1 -g1)
  if(BRAID_SANITIZE MATCHES "undefined")
    # A UBSan finding must fail the test, not scroll by.
    list(APPEND _flags -fno-sanitize-recover=undefined)
  endif()
  add_compile_options("$<$<COMPILE_LANGUAGE:C,CXX>:${_flags}>")
  add_link_options(-fsanitize=${BRAID_SANITIZE})
endif()
