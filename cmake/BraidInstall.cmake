# Installation: headers, libnccl.so -> libnccl.so.2 -> libnccl.so.2.<minor>.<patch>,
# libnccl_static.a, a CMake package (find_package(Braid) gives Braid::nccl) and braid.pc.
include(CMakePackageConfigHelpers)

install(FILES ${PROJECT_SOURCE_DIR}/include/nccl.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/braid DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/include/braid/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/braid)

install(TARGETS nccl nccl_static EXPORT BraidTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})

set(BRAID_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/Braid)
install(EXPORT BraidTargets NAMESPACE Braid:: DESTINATION ${BRAID_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/BraidConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/BraidConfig.cmake INSTALL_DESTINATION ${BRAID_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/BraidConfigVersion.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/BraidConfig.cmake ${PROJECT_BINARY_DIR}/BraidConfigVersion.cmake
        DESTINATION ${BRAID_CMAKE_DIR})

# braid.pc locates the prefix from its own place, so `cmake --install --prefix P` works
# whatever prefix was configured.
file(RELATIVE_PATH BRAID_PC_TO_PREFIX "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" BRAID_PC_TO_PREFIX "${BRAID_PC_TO_PREFIX}")
set(BRAID_PC_CUDA_LIBS "")
if(BRAID_CUDA_ENABLED)
  set(BRAID_PC_CUDA_LIBS " -L${CUDAToolkit_LIBRARY_DIR} -lcudart_static -ldl -lrt")
endif()
set(BRAID_PC_TLS_LIBS "")
if(BRAID_TLS_ENABLED)
  set(BRAID_PC_TLS_LIBS " -lssl -lcrypto")
endif()
configure_file(${PROJECT_SOURCE_DIR}/cmake/braid.pc.in ${PROJECT_BINARY_DIR}/braid.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/braid.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
