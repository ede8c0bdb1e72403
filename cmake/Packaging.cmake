# Install rules and the Debian packages (`cpack -G DEB` in the build tree), one per component:
#   benchfleet-agent        /usr/bin/benchfleet-agent, its systemd unit and /etc/default file
#   benchfleet-coordinator  /usr/bin/benchfleet-coordinator, its unit and /etc/default file, the
#                           Prometheus and Grafana files of deploy/ under /usr/share/benchfleet
#   benchfleet-cli          /usr/bin/benchfleet (operators' machines need only this one)
# Depends come from dpkg-shlibdeps (the bookworm libraries the binaries link). Units go to
# /lib/systemd/system (bookworm's place for packaged units); the services are not enabled or
# started on install: they need their secret files first (deploy/README.md, "A fleet of hosts").
# Checked by tests/deploy/package_deb_test.sh (ctest label `package`).

include(GNUInstallDirs)

set(_bf_deploy ${PROJECT_SOURCE_DIR}/deploy)
set(_bf_unit_dir /lib/systemd/system)

install(TARGETS benchfleet-agent RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT agent)
install(FILES ${_bf_deploy}/systemd/benchfleet-agent.service DESTINATION ${_bf_unit_dir} COMPONENT agent)
install(FILES ${_bf_deploy}/systemd/benchfleet-agent.default DESTINATION /etc/default
        RENAME benchfleet-agent COMPONENT agent)
install(FILES ${PROJECT_SOURCE_DIR}/agent/agent.example.yaml ${PROJECT_SOURCE_DIR}/agent/README.md
        DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/benchfleet-agent COMPONENT agent)

install(TARGETS benchfleet-coordinator RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT coordinator)
install(FILES ${_bf_deploy}/systemd/benchfleet-coordinator.service DESTINATION ${_bf_unit_dir}
        COMPONENT coordinator)
install(FILES ${_bf_deploy}/systemd/benchfleet-coordinator.default DESTINATION /etc/default
        RENAME benchfleet-coordinator COMPONENT coordinator)
install(FILES ${_bf_deploy}/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/benchfleet-coordinator
        COMPONENT coordinator)
install(FILES ${PROJECT_SOURCE_DIR}/coordinator/auth/README.md DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/benchfleet-coordinator
        RENAME SECURITY.md COMPONENT coordinator OPTIONAL)
install(DIRECTORY ${_bf_deploy}/prometheus ${_bf_deploy}/grafana
        DESTINATION ${CMAKE_INSTALL_DATADIR}/benchfleet COMPONENT coordinator)

install(TARGETS benchfleet RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT cli)

# Maintainer scripts: systemd learns about the units; removing a package stops its service.
foreach(_bf_comp agent coordinator)
  set(BENCHFLEET_SERVICE benchfleet-${_bf_comp}.service)
  set(_bf_dir ${PROJECT_BINARY_DIR}/packaging/${_bf_comp})
  foreach(_bf_script postinst prerm postrm)
    configure_file(${PROJECT_SOURCE_DIR}/cmake/packaging/${_bf_script}.in ${_bf_dir}/${_bf_script}
                   @ONLY FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
                   WORLD_READ WORLD_EXECUTE)
  endforeach()
  file(WRITE ${_bf_dir}/conffiles "/etc/default/benchfleet-${_bf_comp}\n")
  string(TOUPPER ${_bf_comp} _bf_up)
  set(CPACK_DEBIAN_${_bf_up}_PACKAGE_CONTROL_EXTRA
      ${_bf_dir}/postinst ${_bf_dir}/prerm ${_bf_dir}/postrm ${_bf_dir}/conffiles)
endforeach()

set(CPACK_PACKAGE_NAME benchfleet)
set(CPACK_PACKAGE_VENDOR benchfleet)
set(CPACK_PACKAGE_CONTACT "benchfleet maintainers <maintainers@benchfleet.invalid>")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_COMPONENTS_ALL agent coordinator cli)

set(CPACK_DEB_COMPONENT_INSTALL ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_RELEASE 1)
set(CPACK_DEBIAN_AGENT_PACKAGE_NAME benchfleet-agent)
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_NAME benchfleet-coordinator)
set(CPACK_DEBIAN_CLI_PACKAGE_NAME benchfleet-cli)
# Debian descriptions: the first line is the synopsis, the others the long description.
set(CPACK_DEBIAN_AGENT_DESCRIPTION [=[benchfleet agent: measures this machine's benchmark runs
The agent runs benchmark series on this machine (llama-server, ComfyUI, workflows,
OpenAI-compatible servers), records every run with its conditions and streams the
records to a benchfleet coordinator over mutual TLS.]=])
set(CPACK_DEBIAN_COORDINATOR_DESCRIPTION [=[benchfleet coordinator: receives, stores and schedules benchmark runs
The coordinator accepts agents' records over gRPC (mutual TLS), stores each exactly
once in PostgreSQL, schedules series on the fleet and serves Prometheus metrics.
The Prometheus rules and Grafana dashboards are in /usr/share/benchfleet.]=])
set(CPACK_DEBIAN_CLI_DESCRIPTION [=[benchfleet command: runs, agents, series, tokens and the sizing guide
The operators' command line for a benchfleet coordinator.]=])
# A coordinator needs a PostgreSQL somewhere; AMD GPUs are sampled with rocm-smi.
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_RECOMMENDS "benchfleet-cli")
set(CPACK_DEBIAN_COORDINATOR_PACKAGE_SUGGESTS "postgresql (>= 15), prometheus, grafana")
set(CPACK_DEBIAN_AGENT_PACKAGE_SUGGESTS "rocm-smi")

include(CPack)
