# PDC's own BULKI serializer (src/commons/serde/bulki/ of PDC 2e5de75a),
# compiled unchanged from the tarball in PDC_CKPT_PDC_SOURCES, for the
# side-by-side codec benchmark (pdc-serde-bench) and the test that decodes
# pdc-ckpt's records with PDC's deserializer (tests/pdc_serde). The sources
# are extracted into the build directory at configure time; the repository
# never contains PDC code. Without PDC_CKPT_PDC_SOURCES nothing is built and
# PDC_CKPT_HAVE_PDC_SERDE is OFF (the tests then report SKIPPED). Included
# by every directory that needs it, guarded by `if(NOT TARGET pdc_serde)`.
set(PDC_CKPT_HAVE_PDC_SERDE OFF)
set(_pdc_tarball "${PDC_CKPT_PDC_SOURCES}/pdc-2e5de75a.tar.gz")
if(PDC_CKPT_PDC_SOURCES AND NOT EXISTS "${_pdc_tarball}")
  message(WARNING "PDC_CKPT_PDC_SOURCES=${PDC_CKPT_PDC_SOURCES} holds no pdc-2e5de75a.tar.gz: "
                  "pdc-serde-bench is not built and its tests report SKIPPED")
endif()
if(PDC_CKPT_PDC_SOURCES AND EXISTS "${_pdc_tarball}")
  set(_pdc_root "${CMAKE_BINARY_DIR}/thirdparty/pdc-2e5de75a")
  set(_pdc_serde "${_pdc_root}/src/commons/serde/bulki")
  if(NOT EXISTS "${_pdc_serde}/bulki_serde.c")
    file(ARCHIVE_EXTRACT INPUT "${_pdc_tarball}" DESTINATION "${CMAKE_BINARY_DIR}/thirdparty"
         PATTERNS "pdc-2e5de75a/src/commons/serde/bulki/*"
                  "pdc-2e5de75a/src/commons/generic/include/pdc_generic.h")
  endif()
  # Re-extract when the tarball changes.
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${_pdc_tarball}")
  add_library(pdc_serde STATIC ${_pdc_serde}/bulki.c ${_pdc_serde}/bulki_serde.c
                               ${_pdc_serde}/bulki_vle_util.c)
  # PDC's headers are theirs: SYSTEM keeps their warnings out of our -Werror
  # builds, and -w their sources' (void-pointer arithmetic, old-style
  # prototypes). Same optimisation level as the rest of the build.
  target_include_directories(pdc_serde SYSTEM PUBLIC ${_pdc_serde}/include
                             ${_pdc_root}/src/commons/generic/include)
  target_compile_options(pdc_serde PRIVATE -w)
  # Our helpers around it (a quiet free), shared by the benchmark and tests.
  add_library(pdc_serde_util STATIC ${CMAKE_CURRENT_LIST_DIR}/pdc_serde_util.c)
  target_include_directories(pdc_serde_util PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(pdc_serde_util PUBLIC pdc_serde)
  set(PDC_CKPT_HAVE_PDC_SERDE ON)
endif()

# pdc_ckpt_pdc_test(NAME COMMAND...): a test that runs PDC's serializer.
# Without PDC_CKPT_PDC_SOURCES it reports SKIPPED (exit 77), never passes.
# PDC's deserializer leaks an entity shell per decoded entity: the
# LeakSanitizer suppression names that one function.
function(pdc_ckpt_pdc_test name)
  if(TARGET pdc_serde)
    add_test(NAME ${name} COMMAND ${ARGN})
    set_tests_properties(${name} PROPERTIES ENVIRONMENT
      "LSAN_OPTIONS=suppressions=${PROJECT_SOURCE_DIR}/tests/data/lsan_pdc_serde.supp")
  else()
    add_test(NAME ${name}
             COMMAND sh -c "echo 'PDC_CKPT_PDC_SOURCES not given: the PDC serializer is not built'; exit 77")
  endif()
  set_tests_properties(${name} PROPERTIES SKIP_RETURN_CODE 77)
endfunction()
