# Sources of src/exec (paths relative to src/).
list(APPEND BRAID_SOURCES
)
