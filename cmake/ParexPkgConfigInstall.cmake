# cmake/ParexPkgConfigInstall.cmake - runs at `cmake --install` time (install(SCRIPT), see the
# install part of CMakeLists.txt): writes parex.pc with the prefix being installed to, which is
# only known now (`cmake --install build --prefix X` overrides the configure-time
# CMAKE_INSTALL_PREFIX), and installs it through file(INSTALL), which honours DESTDIR and records
# the file in install_manifest.txt.
#
# Inputs, set by an install(CODE) just before: PX_PC_TEMPLATE (parex.pc with everything but the
# prefix filled in at configure time), PX_PC_DESTINATION (the pkgconfig directory, relative to
# the prefix or absolute).
if(NOT PX_PC_TEMPLATE OR NOT PX_PC_DESTINATION)
  message(FATAL_ERROR "ParexPkgConfigInstall.cmake: PX_PC_TEMPLATE and PX_PC_DESTINATION must be set")
endif()
# An absolute, normalised prefix: no `.`/`..` segments and no trailing slash ("/" stays "/").
cmake_path(ABSOLUTE_PATH CMAKE_INSTALL_PREFIX NORMALIZE OUTPUT_VARIABLE PX_PC_PREFIX)
string(REGEX REPLACE "(.)/+$" "\\1" PX_PC_PREFIX "${PX_PC_PREFIX}")
if(IS_ABSOLUTE "${PX_PC_DESTINATION}")
  set(_px_pc_dir "${PX_PC_DESTINATION}")
else()
  set(_px_pc_dir "${PX_PC_PREFIX}/${PX_PC_DESTINATION}")
endif()
# One staging file per prefix, so two installs of one build tree into different prefixes (the
# install tests) cannot overwrite each other's file.
string(MD5 _px_pc_key "${PX_PC_PREFIX}")
get_filename_component(_px_pc_stage "${PX_PC_TEMPLATE}" DIRECTORY)
set(_px_pc_stage "${_px_pc_stage}/pkgconfig-install/${_px_pc_key}")
configure_file("${PX_PC_TEMPLATE}" "${_px_pc_stage}/parex.pc" @ONLY)
file(INSTALL DESTINATION "${_px_pc_dir}" TYPE FILE FILES "${_px_pc_stage}/parex.pc")
