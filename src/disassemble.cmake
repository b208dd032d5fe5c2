# Writes the disassembly of the work-loop objects to OUT (see `make asm`).
string(REPLACE ":" ";" objects "${OBJECTS}")
get_filename_component(dir "${OUT}" DIRECTORY)
file(MAKE_DIRECTORY "${dir}")
execute_process(COMMAND "${OBJDUMP}" -d --no-show-raw-insn ${objects}
                OUTPUT_FILE "${OUT}" RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "objdump failed on ${objects}")
endif()
message(STATUS "measured loops: ${OUT}")
