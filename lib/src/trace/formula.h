// Trace formulas written both ways, in plain text and in LaTeX, so the
// two cannot disagree: the pieces wording.cc and the variants'
// (variants/) build their steps' words from.
#pragma once

#include <algorithm>
#include <cctype>
#include <string>

#include "attn/trace.h"

namespace attn::formula {

// A piece of a formula written both ways: "·" and " \cdot ".
struct Math {
  std::string text, latex;
  Math(const char* s) : text(s), latex(s) {}
  Math(const std::string& s) : text(s), latex(s) {}
  Math(std::string t, std::string l) : text(std::move(t)), latex(std::move(l)) {}
};

inline Math operator+(Math a, const Math& b) {
  a.text += b.text;
  a.latex += b.latex;
  return a;
}

inline const Math kDot("·", " \\cdot ");
inline const Math kTop("ᵀ", "^\\top");
inline const Math kMinus("−", "-");
inline const Math kOdot("⊙", "\\odot");
inline const Math kNorm("‖", "\\|");
inline const Math kSumJ("Σ_j", "\\sum_j ");
inline const Math kDots("...", "\\dots");
inline const Math kTildeA("Ã", "\\tilde{A}");
inline const Math kMaskFill("mask_fill", "\\text{mask\\_{fill}}");

// A function set upright in LaTeX: exp, max, tanh have their own command.
inline Math fn(const std::string& name) { return {name, "\\" + name}; }
inline Math roman(const std::string& name) { return {name, "\\mathrm{" + name + "}"}; }
inline Math hat(const std::string& x) { return {x + "\u0302", "\\hat{" + x + "}"}; }

// x_i, S_{ij}: LaTeX braces a subscript of more than one character.
inline Math sub(const Math& base, const std::string& index) {
  const bool word = index.size() > 1 && std::all_of(index.begin(), index.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) != 0;
                    });
  return {base.text + "_" + index, base.latex + "_" + (word ? "{" + index + "}" : index)};
}

// "Q_1" in a step of head 1; "Q" in a step not per head.
inline Math at_head(const Math& base, int64_t head) {
  return head < 0 ? base : sub(base, std::to_string(head));
}

inline StepWords words(std::string title, const Math& formula, std::string note = {}) {
  StepWords w;
  w.title = std::move(title);
  w.formula = formula.text;
  w.latex = formula.latex;
  w.note = std::move(note);
  return w;
}

// A formula that defines a matrix element by element ("E_ij = ..."): its
// LaTeX display names the matrix ("E =") above the table.
inline StepWords each(std::string title, const Math& name, const std::string& index,
                      const Math& rhs, std::string note = {}) {
  StepWords w = words(std::move(title), sub(name, index) + " = " + rhs, std::move(note));
  w.latex_name = name.latex;
  return w;
}

}  // namespace attn::formula
