// attn: the command-line program (app/cli.cc does the work).
#include "cli.h"

int main(int argc, char** argv) { return attn::cli::run_program(argc, argv); }
