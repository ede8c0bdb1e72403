# The clang fuzz build (BENCHFLEET_FUZZ=ON, configured by scripts/fuzz): included from the
# top-level CMakeLists.txt, which returns right after it, so only the libFuzzer targets and the
# libraries they link are configured. All of it but the generated protobuf code is instrumented
# for libFuzzer's coverage, ASan and UBSan (UB stops the run: it is a finding, not a warning).
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "BENCHFLEET_FUZZ needs clang (-DCMAKE_CXX_COMPILER=clang++): libFuzzer is clang's")
endif()
# Only the messages the parsers produce (record.proto, conditions.proto; fleet.proto for the
# regression verdicts beside the records, synthesis/readers/measurement_files.h), without the gRPC services
# of proto/: the whole benchfleet_proto was a third of a cold fuzz build. Defined before the
# sanitizer flags, so the generated code is not instrumented (its coverage guides nothing).
set(fuzz_gen_dir ${CMAKE_BINARY_DIR}/proto/gen)
file(MAKE_DIRECTORY ${fuzz_gen_dir})
set(fuzz_proto_srcs)
foreach(name record conditions fleet)
  set(outs ${fuzz_gen_dir}/benchfleet/v1/${name}.pb.cc ${fuzz_gen_dir}/benchfleet/v1/${name}.pb.h)
  add_custom_command(
    OUTPUT ${outs}
    COMMAND protobuf::protoc --proto_path=${PROJECT_SOURCE_DIR}/proto --cpp_out=${fuzz_gen_dir}
            benchfleet/v1/${name}.proto
    DEPENDS ${PROJECT_SOURCE_DIR}/proto/benchfleet/v1/${name}.proto protobuf::protoc
    COMMENT "protoc benchfleet/v1/${name}.proto (messages only)")
  list(APPEND fuzz_proto_srcs ${outs})
endforeach()
add_library(benchfleet_proto_messages STATIC ${fuzz_proto_srcs})
target_include_directories(benchfleet_proto_messages PUBLIC ${fuzz_gen_dir})
target_link_libraries(benchfleet_proto_messages PUBLIC protobuf::libprotobuf)
target_compile_options(benchfleet_proto_messages PRIVATE -w)
add_library(benchfleet_proto ALIAS benchfleet_proto_messages)

set(BENCHFLEET_FUZZ_SANITIZERS address,undefined)
add_compile_options(-fsanitize=fuzzer-no-link,${BENCHFLEET_FUZZ_SANITIZERS}
                    -fno-sanitize-recover=all -fno-omit-frame-pointer)
add_link_options(-fsanitize=${BENCHFLEET_FUZZ_SANITIZERS})
# lld links the ~30 instrumented programs much faster than ld.bfd on two cores.
find_program(BENCHFLEET_FUZZ_LLD ld.lld)
if(BENCHFLEET_FUZZ_LLD)
  add_link_options(-fuse-ld=lld)
endif()

# The product libraries the parsers live in; the backends' parsers are compiled directly in
# tests/fuzz/CMakeLists.txt (their libraries would drag in the agent library, gRPC and HTTP).
add_subdirectory(common)
# The rows the files reader can make (measurement_files.h as_rows), without the rest of analysis/.
add_library(benchfleet_synthesis_run_row STATIC synthesis/analysis/run_row.cc)
target_include_directories(benchfleet_synthesis_run_row PUBLIC ${PROJECT_SOURCE_DIR})
target_link_libraries(benchfleet_synthesis_run_row PUBLIC benchfleet_proto)
add_subdirectory(agent/probes)
add_subdirectory(synthesis/readers)
add_subdirectory(tests/fuzz)
