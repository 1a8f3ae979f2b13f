# Sources of src/algorithms (paths relative to src/).
list(APPEND BRAID_SOURCES
)
