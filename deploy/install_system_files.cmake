# Runs at install time (deploy/CMakeLists.txt): the systemd units, the example
# configuration and the logrotate snippet, whose place and contents depend on the
# prefix. Prefix /usr (the Debian package): /etc and /usr/sbin, as the files in
# deploy/ say. Another prefix P: P/etc, and units that start P/sbin/cairnctld.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(cairn_sysconfdir "/etc")
else()
  set(cairn_sysconfdir "${CMAKE_INSTALL_PREFIX}/etc")
endif()
set(cairn_file_mode OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)
# A staging directory of this installation's own: installs to other places may run at once.
string(MD5 staging_key "$ENV{DESTDIR}|${CMAKE_INSTALL_PREFIX}")
set(staging "${CAIRN_UNIT_STAGING}/${staging_key}")
file(MAKE_DIRECTORY "${staging}")
foreach(unit cairnctld.service cairnd.service)
  file(READ "${CAIRN_DEPLOY_DIR}/systemd/${unit}" text)
  string(REPLACE "/usr/sbin/" "${CMAKE_INSTALL_PREFIX}/sbin/" text "${text}")
  string(REPLACE "/etc/" "${cairn_sysconfdir}/" text "${text}")
  file(WRITE "${staging}/${unit}" "${text}")
  file(INSTALL "${staging}/${unit}" DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/systemd/system"
       PERMISSIONS ${cairn_file_mode})
endforeach()
file(REMOVE_RECURSE "${staging}")
file(INSTALL "${CAIRN_DEPLOY_DIR}/cairn.conf.example" DESTINATION "${cairn_sysconfdir}/cairn"
     PERMISSIONS ${cairn_file_mode})
file(INSTALL "${CAIRN_DEPLOY_DIR}/logrotate/cairn" DESTINATION "${cairn_sysconfdir}/logrotate.d"
     PERMISSIONS ${cairn_file_mode})

# Where the binaries are stripped (CPack: CPACK_STRIP_FILES), also drop what Debian's
# dh_strip drops: the compilers' .comment and .note sections.
if(CMAKE_INSTALL_DO_STRIP)
  foreach(program ${CAIRN_PROGRAMS})
    execute_process(COMMAND "${CAIRN_STRIP}" --remove-section=.comment --remove-section=.note
                            "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/${program}" RESULT_VARIABLE status)
    if(NOT status EQUAL 0)
      message(FATAL_ERROR "strip failed for ${program}")
    endif()
  endforeach()
endif()
