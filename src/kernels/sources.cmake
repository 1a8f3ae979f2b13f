# Sources of src/kernels (paths relative to src/).
list(APPEND BRAID_SOURCES
)
