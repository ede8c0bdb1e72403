# Writes OUT: a C++ file defining benchfleet::coordinator::EmbeddedMigrations() from every
# NNNN_name.sql in DIR, in file-name order, so the binary carries its schema and runs from any
# directory. Run by coordinator/CMakeLists.txt at build time (cmake -P).
file(GLOB sql_files "${DIR}/*.sql")
list(SORT sql_files)
set(body "")
foreach(path ${sql_files})
  get_filename_component(file_name ${path} NAME)
  get_filename_component(stem ${path} NAME_WE)
  if(NOT stem MATCHES "^([0-9]+)_[a-z0-9_]+$")
    message(FATAL_ERROR "migration ${file_name} is not named NNNN_name.sql")
  endif()
  math(EXPR version "${CMAKE_MATCH_1}")
  file(READ ${path} sql)
  if(sql MATCHES "\\)bfsql\"")
    message(FATAL_ERROR "migration ${file_name} contains the raw-string delimiter )bfsql\"")
  endif()
  string(APPEND body "      {${version}, \"${stem}\", R\"bfsql(${sql})bfsql\"},\n")
endforeach()
file(WRITE ${OUT}.tmp
"// Generated from coordinator/migrations/*.sql by embed_migrations.cmake. Do not edit.
#include \"coordinator/store/migrations.h\"

namespace benchfleet::coordinator {

const std::vector<Migration>& EmbeddedMigrations() {
  static const std::vector<Migration>* migrations = new std::vector<Migration>{
${body}  };
  return *migrations;
}

}  // namespace benchfleet::coordinator
")
# Only touch OUT when it changed, so an unrelated re-run does not rebuild the library.
file(COPY_FILE ${OUT}.tmp ${OUT} ONLY_IF_DIFFERENT)
file(REMOVE ${OUT}.tmp)
