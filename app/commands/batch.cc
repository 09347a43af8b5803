#include "commands/batch.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <new>
#include <system_error>

#include "attn/error.h"
#include "attn/file_io.h"
#include "commands/exit_codes.h"
#include "io/formats.h"

namespace attn {

namespace fs = std::filesystem;

namespace {

std::string input_stem(const std::string& input) {
  return input == "-" ? "stdin" : fs::path(input).stem().string();
}

bool is_directory(const std::string& path) {
  std::error_code ec;
  return path != "-" && fs::is_directory(path, ec);
}

// A file a directory batch runs: one of the registry's single-tensor
// formats, by its own extension (a .txt beside them is as often a note).
bool batch_extension(const std::string& path) {
  static const std::vector<std::string> taken = batch_extensions();
  return std::find(taken.begin(), taken.end(), extension(path)) != taken.end();
}

std::string output_extension(const RunRequest& run) {
  if (run.emit_pytorch) return "py";
  if (run.trace.enabled) {
    switch (run.trace.options.format) {
      case TraceFormat::kText:
        return "txt";
      case TraceFormat::kMarkdown:
        return "md";
      case TraceFormat::kLatex:
        return "tex";
      case TraceFormat::kJson:
        return "json";
    }
  }
  switch (run.output.format) {
    case Format::kJson:
      return "json";
    case Format::kCsv:
      return "csv";
    case Format::kTable:
      break;
  }
  return "txt";
}

// Flags that name a single output cannot serve several inputs.
void refuse_single_outputs(const BatchRequest& b) {
  const RunRequest& r = b.run;
  const std::string why = " writes one file; with --out-dir each input gets its own result";
  if (!r.example.empty()) throw_usage("--out-dir runs input files, not --example");
  if (r.output_path != "-" && !r.output_path.empty()) throw_usage("-o" + why + " file in DIR");
  if (!r.weights_out.empty()) throw_usage("--weights-out" + why + " (use --weights)");
  if (!r.heatmap.path.empty() && !batch_figure_format(r.heatmap.path)) {
    throw_usage("--heatmap" + why + "; --heatmap png, svg or html draws one figure per input");
  }
  if (r.heatmap.show) throw_usage("--show draws in the terminal; it does not go with --out-dir");
}

// Passes a run's reports on, naming the input on each line of its
// reports (check results), as several inputs share one stderr.
class InputConsole : public Console {
 public:
  InputConsole(Console& base, std::string name) : base_(base), name_(std::move(name)) {}
  void out(std::string_view text) override { base_.out(text); }
  void warn(std::string_view line) override { base_.warn(line); }
  void error(std::string_view line) override { base_.error(line); }
  void info(std::string_view text) override {
    std::string s;
    size_t start = 0;
    while (start < text.size()) {
      size_t end = text.find('\n', start);
      end = end == std::string_view::npos ? text.size() : end + 1;
      const std::string_view line = text.substr(start, end - start);
      if (line != "\n") s += name_ + ": ";
      s += line;
      start = end;
    }
    base_.info(s);
  }

 private:
  Console& base_;
  std::string name_;
};

// "a, b, c", or "a, b, ... and 7 more" past ten names.
std::string name_list(const std::vector<std::string>& names) {
  std::string s;
  const size_t shown = std::min<size_t>(names.size(), 10);
  for (size_t i = 0; i < shown; ++i) s += (i ? ", " : "") + display_name(names[i]);
  if (names.size() > shown) s += " and " + std::to_string(names.size() - shown) + " more";
  return s;
}

std::string canonical(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(path, ec);
  return ec ? path : p.string();
}

}  // namespace

bool batch_figure_format(const std::string& heatmap) {
  return heatmap == "png" || heatmap == "svg" || heatmap == "html";
}

std::string batch_output_name(const std::string& input, const RunRequest& run) {
  return input_stem(input) + "." + output_extension(run);
}

std::vector<std::string> expand_batch_inputs(const std::vector<std::string>& inputs) {
  std::vector<std::string> out;
  for (const std::string& in : inputs) {
    if (!is_directory(in)) {
      out.push_back(in);
      continue;
    }
    std::vector<std::string> files;
    std::error_code ec;
    for (fs::directory_iterator it(in, ec), end; !ec && it != end; it.increment(ec)) {
      const std::string name = it->path().filename().string();
      std::error_code type_ec;
      if (name.empty() || name[0] == '.' || !batch_extension(name)) continue;
      if (!fs::is_regular_file(it->path(), type_ec)) continue;
      files.push_back((fs::path(in) / name).string());
    }
    if (ec) throw_file(in, "cannot read the directory: " + ec.message());
    if (files.empty()) {
      throw_usage(in + ": no " + extension_list(batch_extensions(), "or") +
                  " files in the directory");
    }
    std::sort(files.begin(), files.end());
    out.insert(out.end(), files.begin(), files.end());
  }
  return out;
}

int run_batch(const BatchRequest& b, Console& console) {
  refuse_conflicting_flags(b.run);
  if (b.out_dir.empty()) {
    if (b.inputs.size() > 1) {
      throw_usage(std::to_string(b.inputs.size()) +
                  " inputs need --out-dir DIR (each result is written to its own file there)");
    }
    if (batch_figure_format(b.run.heatmap.path)) {
      throw_usage("--heatmap " + b.run.heatmap.path + " names a format: with --out-dir DIR it " +
                  "draws one figure per input there; for one run give a file name (--heatmap " +
                  "weights." + b.run.heatmap.path + ")");
    }
    RunRequest one = b.run;
    one.input = b.inputs.empty() ? "" : b.inputs.front();
    if (is_directory(one.input)) {
      // A file error as for any unreadable input (exit 4), with the way out.
      throw_file(one.input,
                 "cannot read: Is a directory (to run each of its files, add "
                 "--out-dir DIR for the results)");
    }
    return run_command(one, console);
  }
  refuse_single_outputs(b);
  if (b.inputs.empty()) throw_usage("--out-dir needs input files or directories to run");
  const std::vector<std::string> inputs = expand_batch_inputs(b.inputs);
  if (std::count(inputs.begin(), inputs.end(), "-") > 1) {
    throw_usage("- (stdin) can be read only once");
  }

  // Every output name is decided, and checked, before anything runs. A
  // figure (--heatmap png|svg|html) goes beside its result: DIR/NAME.png.
  const std::string figure_format =
      batch_figure_format(b.run.heatmap.path) ? b.run.heatmap.path : "";
  std::vector<std::string> outputs, figures;
  std::map<std::string, std::string> input_of;  // canonical path -> input
  for (const std::string& in : inputs) {
    if (in != "-") input_of[canonical(in)] = in;
  }
  std::map<std::string, std::string> writer_of;  // output name -> input
  for (const std::string& in : inputs) {
    const std::string name = batch_output_name(in, b.run);
    const std::string out = (fs::path(b.out_dir) / name).string();
    if (auto [it, fresh] = writer_of.emplace(name, in); !fresh) {
      throw_usage(display_name(it->second) + " and " + display_name(in) +
                  " would both be written to " + out + "; give them different names");
    }
    if (auto it = input_of.find(canonical(out)); it != input_of.end()) {
      throw_usage("--out-dir " + b.out_dir + ": the result of " + display_name(in) +
                  " would overwrite the input " + it->second + "; choose another directory");
    }
    outputs.push_back(out);
    if (!figure_format.empty()) {
      // Results never end in .png/.svg/.html, nor inputs (batch_extensions):
      // a figure's name is as unique as its result's and is no input.
      figures.push_back((fs::path(b.out_dir) / (input_stem(in) + "." + figure_format)).string());
    }
  }
  std::error_code ec;
  fs::create_directories(b.out_dir, ec);
  if (ec || !is_directory(b.out_dir)) {
    throw_file(b.out_dir, "cannot create the directory: " +
                              (ec ? ec.message() : std::string("a file has that name")));
  }

  const ProgressFn progress = progress_task(b.run.progress, "inputs");
  std::vector<std::string> failed, differ;
  int worst = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    RunRequest one = b.run;
    one.input = inputs[i];
    one.output_path = outputs[i];
    if (!figure_format.empty()) one.heatmap.path = figures[i];
    one.progress = nullptr;  // the batch reports inputs, not each one's steps
    const std::string name = display_name(inputs[i]);
    InputConsole input_console(console, name);
    int code = 0;
    try {
      code = run_command(one, input_console);
    } catch (const Error& e) {
      const std::string msg = e.what();
      // Each line names its input, even for messages about flags.
      const bool named = msg.compare(0, name.size(), name) == 0;
      console.error(named ? msg : name + ": " + msg);
      code = exit_code(e.kind());
    } catch (const std::bad_alloc&) {
      console.error(name + ": out of memory");
      code = kExitInternal;
    }
    if (code == kExitCheckFailed) {
      differ.push_back(inputs[i]);
    } else if (code != 0) {
      failed.push_back(inputs[i]);
    }
    worst = std::max(worst, code);
    if (progress) progress(static_cast<int64_t>(i + 1), static_cast<int64_t>(inputs.size()));
  }

  if (!b.run.quiet || worst != 0) {
    const size_t done = inputs.size() - failed.size();
    std::string s =
        "attn: " + std::to_string(done) + " of " + std::to_string(inputs.size()) + " inputs done";
    if (failed.empty() && differ.empty()) s += "; results in " + b.out_dir;
    if (!failed.empty()) {
      s += "; " + std::to_string(failed.size()) + " failed: " + name_list(failed);
    }
    if (!differ.empty()) {
      s += "; " + std::to_string(differ.size()) +
           " differ from their expected numbers: " + name_list(differ);
    }
    console.info(s + "\n");
  }
  return worst;
}

}  // namespace attn
