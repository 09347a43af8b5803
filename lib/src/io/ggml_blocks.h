// ggml's block types as GGUF files store them (ggml-common.h): each block
// holds the quants of 32 or 256 cells and the float16 scales they are
// multiplied by. The functions here turn n cells (a multiple of the block)
// into floats exactly as ggml's reference dequantize_row_* in
// ggml-quants.c does, operation for operation, so that every float is the
// one llama.cpp computes (tests/element_types_test.cc holds them to
// ggml's own output, bit for bit).
#pragma once

#include <cstdint>

namespace attn::ggml {

// Cells per block of the 32-cell types and of the 256-cell "K" types.
constexpr int64_t kQK = 32;
constexpr int64_t kQKK = 256;

// A float16 as ggml widens it (GGML_FP16_TO_FP32 without F16C): exact, a
// NaN keeps its payload and is made quiet.
float fp16_to_fp32(uint16_t h);

void dequantize_q4_0(const unsigned char* blocks, float* y, int64_t n);
void dequantize_q4_1(const unsigned char* blocks, float* y, int64_t n);
void dequantize_q5_0(const unsigned char* blocks, float* y, int64_t n);
void dequantize_q5_1(const unsigned char* blocks, float* y, int64_t n);
void dequantize_q8_0(const unsigned char* blocks, float* y, int64_t n);
void dequantize_q2_k(const unsigned char* blocks, float* y, int64_t n);
void dequantize_q3_k(const unsigned char* blocks, float* y, int64_t n);
void dequantize_q4_k(const unsigned char* blocks, float* y, int64_t n);
void dequantize_q5_k(const unsigned char* blocks, float* y, int64_t n);
void dequantize_q6_k(const unsigned char* blocks, float* y, int64_t n);
void dequantize_iq4_nl(const unsigned char* blocks, float* y, int64_t n);
void dequantize_iq4_xs(const unsigned char* blocks, float* y, int64_t n);

}  // namespace attn::ggml
