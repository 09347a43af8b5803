// `attn bench`: binds flags to BenchOptions and prints the result.
#include <memory>
#include <string>

#include "attn/error.h"
#include "commands.h"
#include "commands/bench.h"
#include "commands/flags.h"
#include "console.h"
#include "flag_table.h"

namespace attn::cli {

Action add_bench(CLI::App& app) {
  struct Flags {
    BenchOptions o;
    std::string n = "2048", d = "64", heads = "1", batch = "1", dtype = "f32", threads = "0";
    std::string seconds = "1", max_elements;
    bool no_weights = false, json = false;
  };
  auto f = std::make_shared<Flags>();
  CLI::App* b = app.add_subcommand("bench", "time the attention kernels on random inputs");
  b->allow_extras();
  add(b, "--n", f->n);
  add(b, "--d", f->d);
  add(b, "--heads", f->heads);
  add(b, "--batch", f->batch);
  add(b, "--dtype", f->dtype);
  add(b, "--no-weights", f->no_weights);
  add(b, "--causal", f->o.causal);
  // Today's attention, spelled and checked as for attn run.
  auto settings = add_setting_flags(b, "Today's attention (as for attn run)", true);
  add(b, "--threads", f->threads);
  add(b, "--seconds", f->seconds);
  add(b, "--json", f->json);
  add(b, "--max-elements", f->max_elements);
  return [f, b, settings]() {
    BenchOptions& o = f->o;
    settings(o.settings);
    o.n = parse_int_flag("--n", f->n, 1, 1 << 20);
    o.d = parse_int_flag("--d", f->d, 1, 1 << 16);
    o.heads = parse_int_flag("--heads", f->heads, 1, 4096);
    o.batch = parse_int_flag("--batch", f->batch, 1, 1 << 20);
    o.threads = parse_int_flag("--threads", f->threads, 0, 1024);
    o.dtype = parse_dtype_flag("--dtype", f->dtype);
    o.min_seconds = parse_nonnegative_flag("--seconds", f->seconds);
    if (o.min_seconds > 3600) {
      throw_usage("--seconds: expected a number of seconds from 0 to 3600, got '" +
                  message_text(f->seconds) + "'");
    }
    o.weights = !f->no_weights;
    if (!f->max_elements.empty()) o.max_elements = parse_max_elements_flag(f->max_elements);
    const BenchResult r = run_bench(o);
    StdConsole console;
    console.out(f->json ? bench_json(o, r) : bench_text(o, r));
    return 0;
  };
}

}  // namespace attn::cli
