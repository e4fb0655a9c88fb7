# How much debug information a RelWithDebInfo build carries (the Makefile's build, CI's).
# "lines" (-g1): function names and line tables, enough for backtraces, addr2line, perf and
# the sanitizers' reports, and a third less compile CPU than -g, with objects a quarter the
# size (docs/decisions.md, branch build-time). "full" (-g): also local variables, parameters
# and types, for gdb sessions. A Debug build always has full information.
set(CAIRN_DEBUG_INFO "lines" CACHE STRING "debug information of a RelWithDebInfo build: lines (-g1) or full (-g)")
set_property(CACHE CAIRN_DEBUG_INFO PROPERTY STRINGS lines full)
if(CAIRN_DEBUG_INFO STREQUAL "lines")
  # After CMAKE_CXX_FLAGS_RELWITHDEBINFO's -g on the command line: the last level given wins.
  add_compile_options($<$<CONFIG:RelWithDebInfo>:-g1>)
elseif(NOT CAIRN_DEBUG_INFO STREQUAL "full")
  message(FATAL_ERROR "CAIRN_DEBUG_INFO is lines or full, not '${CAIRN_DEBUG_INFO}'")
endif()
