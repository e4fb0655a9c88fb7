# Makes a man page from a program's --help text (cmake -P, at build time):
#   -DPROGRAM=path -DNAME=sbatch -DSECTION=1 -DVERSION=0.1.0 -DSUMMARY="..." -DOUTPUT=sbatch.1.gz
# [-DHELP_FILE=file]: a text to use instead of running the program; [-DSEE_ALSO=text].
# The text goes in as it is (.nf): it is already laid out for a terminal.
foreach(var NAME SECTION VERSION SUMMARY OUTPUT)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "help_to_man.cmake: ${var} is not set")
  endif()
endforeach()
if(DEFINED HELP_FILE)
  file(READ "${HELP_FILE}" help)
else()
  execute_process(COMMAND "${PROGRAM}" --help OUTPUT_VARIABLE help RESULT_VARIABLE status)
  if(NOT status EQUAL 0 OR help STREQUAL "")
    message(FATAL_ERROR "${PROGRAM} --help failed (${status})")
  endif()
endif()

# roff: a backslash is \e; a line starting with . or ' would be a request: \& before it.
string(REPLACE "\\" "\\e" help "${help}")
string(REPLACE "-" "\\-" help "${help}")
string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" help "${help}")
string(REPLACE "-" "\\-" summary "${SUMMARY}")
string(TOUPPER "${NAME}" title)
file(WRITE "${OUTPUT}.tmp"
".TH ${title} ${SECTION} \"\" \"cairn ${VERSION}\" \"Cairn\"
.SH NAME
${NAME} \\- ${summary}
.SH DESCRIPTION
.nf
${help}.fi
")
if(DEFINED SEE_ALSO)
  file(APPEND "${OUTPUT}.tmp" ".SH SEE ALSO\n${SEE_ALSO}\n")
endif()
# gzip -9n: no name or time stamp in the archive, so a rebuild gives the same bytes.
execute_process(COMMAND gzip -9n -c "${OUTPUT}.tmp" OUTPUT_FILE "${OUTPUT}" RESULT_VARIABLE status)
file(REMOVE "${OUTPUT}.tmp")
if(NOT status EQUAL 0)
  message(FATAL_ERROR "gzip failed for ${OUTPUT}")
endif()
