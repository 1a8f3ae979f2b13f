# Warning flags shared by every Braid target. CI builds with BRAID_WERROR=ON.
function(braid_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wshadow -Wnon-virtual-dtor -Wcast-align
                              -Wformat=2 -Wimplicit-fallthrough -Wno-missing-field-initializers>
    $<$<COMPILE_LANGUAGE:C>:-Wall -Wextra -Wformat=2>)
  if(BRAID_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:C,CXX>:-Werror>)
  endif()
endfunction()
