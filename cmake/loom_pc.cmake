# loom_pc.cmake — writes loom.pc, the pkg-config file of libloom, for the
# prefix being installed to. Included by `cmake --install` (the install(CODE)
# rule in CMakeLists.txt sets LOOM_PC_IN, LOOM_PC_OUT, LOOM_LIBDIR,
# LOOM_INCLUDEDIR and PROJECT_VERSION first), so `--prefix` (make install
# PREFIX=…) is what the file names, not the prefix the build was configured
# with. DESTDIR is not part of it: it only stages the files.
set(LOOM_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
foreach(kind LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${LOOM_${kind}}")
    set(LOOM_PC_${kind} "${LOOM_${kind}}")
  else()
    set(LOOM_PC_${kind} "\${prefix}/${LOOM_${kind}}")
  endif()
endforeach()
configure_file("${LOOM_PC_IN}" "${LOOM_PC_OUT}" @ONLY)
