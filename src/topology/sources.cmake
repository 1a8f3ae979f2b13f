# Sources of src/topology (paths relative to src/). The XML parser (libxml2) and hwloc come
# from Debian (scripts/install-deps.sh); NVML is loaded at run time, never linked.
list(APPEND BRAID_SOURCES
  topology/detect.cc
  topology/graph.cc
  topology/graph_xml.cc
  topology/hwloc_source.cc
  topology/model.cc
  topology/nccl_xml.cc
  topology/nic_choice.cc
  topology/nvml.cc
  topology/paths.cc
  topology/placement.cc
  topology/report.cc
  topology/search.cc
  topology/search_engine.cc
  topology/search_system.cc
  topology/sysfs_nics.cc
  topology/xml.cc
  topology/xml_attrs.cc
)
find_package(LibXml2 REQUIRED)
find_package(PkgConfig REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
# Linked into braid_objects (and so the tests), libnccl.so.2 and libnccl_static.a's users.
set(BRAID_TOPOLOGY_LIBS LibXml2::LibXml2 PkgConfig::HWLOC ${CMAKE_DL_LIBS})
# What a program linking the installed static library adds: plain names, so that the
# exported targets need no imported targets of ours.
set(BRAID_TOPOLOGY_STATIC_LIBS xml2 hwloc m ${CMAKE_DL_LIBS})
