# Sources of the socket backend (paths relative to src/).
list(APPEND BRAID_SOURCES
)
