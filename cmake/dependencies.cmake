# Dependencies, all from Debian packages. A missing one stops configuration
# with the exact command that installs it.
function(attn_missing what package)
  message(FATAL_ERROR
    "attn needs ${what}, which was not found.\n"
    "Install it with:\n"
    "    apt-get install ${package}\n"
    "(or run scripts/dev.sh demo, which installs everything missing)")
endfunction()

find_package(Eigen3 3.4 QUIET NO_MODULE)
if(NOT Eigen3_FOUND)
  attn_missing("Eigen 3.4" "libeigen3-dev")
endif()

find_package(CLI11 QUIET CONFIG)
if(NOT CLI11_FOUND)
  attn_missing("CLI11" "libcli11-dev")
endif()

find_package(nlohmann_json 3 QUIET CONFIG)
if(NOT nlohmann_json_FOUND)
  attn_missing("nlohmann_json" "nlohmann-json3-dev")
endif()

# FreeType reads --font files: unlike stb_truetype it is hardened against
# hostile fonts (fuzzed upstream); stb_truetype draws only the embedded faces.
find_package(Freetype QUIET)
if(NOT FREETYPE_FOUND)
  attn_missing("FreeType" "libfreetype-dev")
endif()


find_path(STB_INCLUDE_DIR stb/stb_image_write.h)
if(NOT STB_INCLUDE_DIR)
  attn_missing("stb (stb_image_write.h)" "libstb-dev")
endif()

# DejaVu Sans, embedded into the binary for the figures' text.
find_file(ATTN_FONT_REGULAR DejaVuSans.ttf PATHS /usr/share/fonts/truetype/dejavu
          PATH_SUFFIXES fonts/truetype/dejavu)
find_file(ATTN_FONT_BOLD DejaVuSans-Bold.ttf PATHS /usr/share/fonts/truetype/dejavu
          PATH_SUFFIXES fonts/truetype/dejavu)
if(NOT ATTN_FONT_REGULAR OR NOT ATTN_FONT_BOLD)
  attn_missing("the DejaVu Sans font (DejaVuSans.ttf)" "fonts-dejavu-core")
endif()

if(ATTN_BUILD_TESTS)
  find_package(GTest QUIET CONFIG)
  if(NOT GTest_FOUND)
    find_package(GTest QUIET)
  endif()
  if(NOT GTest_FOUND)
    attn_missing("GoogleTest" "libgtest-dev")
  endif()
endif()
