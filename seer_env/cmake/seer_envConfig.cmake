# CMake package config for building seer_env model plugins.
#
#   execute_process(COMMAND "${Python_EXECUTABLE}" -c
#                   "import seer_env; print(seer_env.get_cmake_dir())"
#                   OUTPUT_VARIABLE seer_env_DIR OUTPUT_STRIP_TRAILING_WHITESPACE)
#   find_package(seer_env CONFIG REQUIRED)
#   seer_env_add_model(_my_model src/my_model.cpp)   # a Python extension module
#
# Provides:
#   seer_env::model          INTERFACE target: headers, C++17, the compile flags
#                            serial equivalence needs (no FMA contraction, no fast-math).
#   seer_env_add_model(<name> <sources>...)
#                            builds extension module <name> from your sources plus the
#                            runtime's model-side sources (Context checks, Config, workload declarations), which
#                            a plugin compiles in because seer_env._core does not export
#                            C++ symbols.
#   SEER_ENV_INCLUDE_DIR, SEER_ENV_SDK_SOURCES, seer_env_VERSION
include_guard(GLOBAL)

get_filename_component(_seer_env_pkg "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
if(EXISTS "${_seer_env_pkg}/include/seer/model.hpp")
  # An installed wheel: headers and sources were installed into the package.
  set(SEER_ENV_INCLUDE_DIR "${_seer_env_pkg}/include")
  set(_seer_env_src "${_seer_env_pkg}/sdk_src")
else()
  # A source checkout (editable install): use the repository's files.
  set(SEER_ENV_INCLUDE_DIR "${_seer_env_pkg}/../cpp/include")
  set(_seer_env_src "${_seer_env_pkg}/../cpp/src")
endif()
get_filename_component(SEER_ENV_INCLUDE_DIR "${SEER_ENV_INCLUDE_DIR}" ABSOLUTE)
set(SEER_ENV_SDK_SOURCES "${_seer_env_src}/context.cpp" "${_seer_env_src}/config.cpp"
                         "${_seer_env_src}/workload.cpp")
foreach(_f "${SEER_ENV_INCLUDE_DIR}/seer/plugin.hpp" ${SEER_ENV_SDK_SOURCES})
  if(NOT EXISTS "${_f}")
    set(seer_env_FOUND FALSE)
    set(seer_env_NOT_FOUND_MESSAGE "seer_env SDK file missing: ${_f}")
    return()
  endif()
endforeach()

if(NOT TARGET seer_env::model)
  add_library(seer_env::model INTERFACE IMPORTED)
  set_target_properties(seer_env::model PROPERTIES
    INTERFACE_INCLUDE_DIRECTORIES "${SEER_ENV_INCLUDE_DIR}"
    INTERFACE_COMPILE_FEATURES cxx_std_17
    INTERFACE_COMPILE_OPTIONS "-ffp-contract=off;-fno-fast-math")
endif()

function(seer_env_add_model name)
  if(NOT COMMAND Python_add_library)
    find_package(Python 3.10 REQUIRED COMPONENTS Interpreter Development.Module)
  endif()
  Python_add_library(${name} MODULE WITH_SOABI ${ARGN} ${SEER_ENV_SDK_SOURCES})
  target_link_libraries(${name} PRIVATE seer_env::model)
  set_target_properties(${name} PROPERTIES CXX_EXTENSIONS OFF CXX_VISIBILITY_PRESET hidden
                                           VISIBILITY_INLINES_HIDDEN ON)
endfunction()
