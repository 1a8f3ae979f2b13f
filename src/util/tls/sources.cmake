# Sources of src/util/tls (paths relative to src/): OpenSSL's part only when BRAID_TLS found
# it; otherwise a stand-in that refuses every request for TLS with an error saying why.
list(APPEND BRAID_SOURCES util/tls/tls_common.cc)
if(BRAID_TLS_ENABLED)
  list(APPEND BRAID_SOURCES
    util/tls/tls_errors.cc
    util/tls/tls_security.cc
    util/tls/tls_stream.cc
  )
  # Linked into braid_objects (and so the tests) and libnccl.so.2; plain names for users of
  # the installed static library.
  set(BRAID_TLS_LIBS OpenSSL::SSL OpenSSL::Crypto)
  set(BRAID_TLS_STATIC_LIBS ssl crypto)
else()
  list(APPEND BRAID_SOURCES util/tls/tls_unavailable.cc)
  set(BRAID_TLS_LIBS "")
  set(BRAID_TLS_STATIC_LIBS "")
endif()
