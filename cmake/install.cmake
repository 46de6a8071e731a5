# cmake --install BUILD --prefix P (README "Install"): headers, libraries
# (shared and static), programs, pkg-config files and the CMake package
# pdc-ckpt (targets pdc-ckpt::hooks, pdc-ckpt::hooks_mpi, ...), GNUInstallDirs
# layout. The build tree exports the same targets (pdc-ckpt-config.cmake in
# the build directory), so CMAKE_PREFIX_PATH may name either.
include(CMakePackageConfigHelpers)

set(PDC_CKPT_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/pdc-ckpt)

# One public header per module (ckpt_export.h: the CKPT_API macro they use).
install(FILES codec/ckpt_export.h codec/bulki.h store/ckpt_store.h
              server_hooks/ckpt_hooks.h server_hooks/ckpt_hooks_mpi.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pdc-ckpt)

# Exported names: pdc-ckpt::<name> is the shared library, <name>_static the
# static one.
set(_ckpt_libs bulki:bulki ckpt_store:store ckpt_hooks:hooks ckpt_hooks_mpi:hooks_mpi)
set(_ckpt_targets "")
foreach(_pair IN LISTS _ckpt_libs)
  string(REPLACE ":" ";" _pair "${_pair}")
  list(GET _pair 0 _lib)
  list(GET _pair 1 _name)
  set_target_properties(${_lib}_shared PROPERTIES EXPORT_NAME ${_name})
  set_target_properties(${_lib} PROPERTIES EXPORT_NAME ${_name}_static)
  list(APPEND _ckpt_targets ${_lib}_shared ${_lib})
endforeach()

install(TARGETS ${_ckpt_targets} EXPORT pdc-ckpt-targets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pdc-ckpt)
install(EXPORT pdc-ckpt-targets NAMESPACE pdc-ckpt:: DESTINATION ${PDC_CKPT_CMAKEDIR})
export(EXPORT pdc-ckpt-targets NAMESPACE pdc-ckpt::
       FILE ${CMAKE_BINARY_DIR}/pdc-ckpt-targets.cmake)

configure_package_config_file(cmake/pdc-ckpt-config.cmake.in
                              ${CMAKE_BINARY_DIR}/pdc-ckpt-config.cmake
                              INSTALL_DESTINATION ${PDC_CKPT_CMAKEDIR})
write_basic_package_version_file(${CMAKE_BINARY_DIR}/pdc-ckpt-config-version.cmake
                                 VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/pdc-ckpt-config.cmake
              ${CMAKE_BINARY_DIR}/pdc-ckpt-config-version.cmake
        DESTINATION ${PDC_CKPT_CMAKEDIR})

# pkg-config: prefix relative to the .pc file, so a prefix given only at
# install time (cmake --install --prefix) or moved later still works.
file(RELATIVE_PATH PDC_CKPT_PC_TO_PREFIX "/p/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/p")
string(REGEX REPLACE "/$" "" PDC_CKPT_PC_TO_PREFIX "${PDC_CKPT_PC_TO_PREFIX}")
foreach(_pc pdc-ckpt pdc-ckpt-mpi)
  configure_file(cmake/${_pc}.pc.in ${CMAKE_BINARY_DIR}/pkgconfig/${_pc}.pc @ONLY)
  install(FILES ${CMAKE_BINARY_DIR}/pkgconfig/${_pc}.pc
          DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
endforeach()

# Programs. The benchmarks (tools/bench/: ckpt-bench, ckpt-bench-workload,
# ...) stay in the build tree: they link SQLite and RocksDB.
install(TARGETS bulki-tool ckpt-inspect ckpt-workload RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
