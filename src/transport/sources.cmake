# Sources of src/transport (paths relative to src/).
include(transport/net/socket/sources.cmake)
list(APPEND BRAID_SOURCES
)
