# OpenBLAS from the scipy-openblas32 wheel (headers and library inside the Python package).
# Defines the interface target tinyxla_openblas and TINYXLA_OPENBLAS_LIBDIR.
execute_process(
  COMMAND "${Python_EXECUTABLE}" -c
    "import scipy_openblas32 as s; print(s.get_include_dir()); print(s.get_lib_dir())"
  OUTPUT_VARIABLE _openblas_dirs OUTPUT_STRIP_TRAILING_WHITESPACE
  RESULT_VARIABLE _openblas_rc)
if(NOT _openblas_rc EQUAL 0)
  message(FATAL_ERROR "tinyxla needs the scipy-openblas32 wheel: pip install scipy-openblas32")
endif()
string(REPLACE "\n" ";" _openblas_dirs "${_openblas_dirs}")
list(GET _openblas_dirs 0 TINYXLA_OPENBLAS_INCLUDE)
list(GET _openblas_dirs 1 TINYXLA_OPENBLAS_LIBDIR)
add_library(tinyxla_openblas INTERFACE)
target_include_directories(tinyxla_openblas INTERFACE ${TINYXLA_OPENBLAS_INCLUDE})
target_link_libraries(tinyxla_openblas INTERFACE ${TINYXLA_OPENBLAS_LIBDIR}/libscipy_openblas.so)
