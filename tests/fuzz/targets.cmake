# The fuzz targets (make fuzz; docs/testing.md), included by src/CMakeLists.txt
# in a build configured with -DNOISEBENCH_FUZZ=ON and clang: a target a C
# parser, and a command-line target a kernel of the catalogue. Built with
# the fuzz_targets target only.
set(fuzz_dir ${PROJECT_SOURCE_DIR}/tests/fuzz)
set(fuzz_link -fsanitize=fuzzer,address,undefined -Wl,--wrap=exit)
set(fuzz_targets)
foreach(parser cpu_list inject requirements rank_line trace_line)
  add_executable(fuzz_${parser} EXCLUDE_FROM_ALL ${fuzz_dir}/fuzz_${parser}.c ${fuzz_dir}/trap.c)
  target_include_directories(fuzz_${parser} PRIVATE ${fuzz_dir})
  target_link_libraries(fuzz_${parser} PRIVATE noisebench_core)
  target_link_options(fuzz_${parser} PRIVATE ${fuzz_link})
  list(APPEND fuzz_targets fuzz_${parser})
endforeach()
# noise-simulate's trace files: its one file, included into the target
add_executable(fuzz_simulate_trace EXCLUDE_FROM_ALL ${fuzz_dir}/fuzz_simulate_trace.c
  ${fuzz_dir}/trap.c)
target_include_directories(fuzz_simulate_trace PRIVATE ${fuzz_dir})
target_link_libraries(fuzz_simulate_trace PRIVATE m)
target_link_options(fuzz_simulate_trace PRIVATE ${fuzz_link})
list(APPEND fuzz_targets fuzz_simulate_trace)
foreach(k IN LISTS all_kernels)
  # the first of its sources holds its hooks, included into the target
  list(GET kernel_sources_${k} 0 hooks)
  set(rest ${kernel_sources_${k}})
  list(REMOVE_AT rest 0)
  add_executable(fuzz_options_${k} EXCLUDE_FROM_ALL ${fuzz_dir}/fuzz_options.c ${fuzz_dir}/trap.c
    ${rest} ${driver_sources} lib/launch/ranks_threads.c lib/launch/team_pthread.c)
  target_include_directories(fuzz_options_${k} PRIVATE ${fuzz_dir} kernels driver)
  target_compile_definitions(fuzz_options_${k} PRIVATE
    NB_FUZZ_SOURCE="${CMAKE_CURRENT_SOURCE_DIR}/${hooks}" NB_FUZZ_KERNEL=${k})
  target_link_libraries(fuzz_options_${k} PRIVATE noisebench_core)
  target_link_options(fuzz_options_${k} PRIVATE ${fuzz_link})
  list(APPEND fuzz_targets fuzz_options_${k})
endforeach()
add_custom_target(fuzz_targets DEPENDS ${fuzz_targets})
