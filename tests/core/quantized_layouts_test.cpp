// model/quantized_layouts.cpp: stored bytes of one quantized linear, written out term by term from
// the libraries' tensors for a 4096 x 4096 weight (n = 16,777,216 elements).
#include "model/quantized_layouts.h"

#include <cstdint>

#include <gtest/gtest.h>

namespace vramplan {
namespace quantized_layouts_test {

constexpr int64_t kIn = 4096, kOut = 4096, kN = kIn * kOut;

// bitsandbytes/functional.py quantize_4bit(blocksize=64): the packed uint8 tensor holds two
// weights per byte (n/2), absmax one fp32 per 64-block, plus the 16-entry fp32 NF4 code. With
// compress_statistics (double quantization) absmax becomes uint8 per block, quantized again in
// blocks of 256 (fp32 absmax2 per 256 blocks), with an fp32 offset and a 256-entry fp32 code.
TEST(QuantizedLayouts, BitsandbytesNf4) {
  const int64_t blocks = kN / 64;  // 262,144
  EXPECT_EQ(Nf4Bytes(kN, /*double_quant=*/false), kN / 2 + 4 * blocks + 16 * 4);  // 9,437,248
  EXPECT_EQ(Nf4Bytes(kN, /*double_quant=*/true), kN / 2 + blocks + 4 * (blocks / 256) + 4 + 256 * 4 + 16 * 4);
  EXPECT_EQ(Nf4Bytes(kN, false), 9437248);
  EXPECT_EQ(Nf4Bytes(kN, true), 8655940);
  // A ragged tail still needs a whole block and a whole byte.
  EXPECT_EQ(Nf4Bytes(65, false), 33 + 2 * 4 + 64);
}

// torchao nf4tensor.py to_nf4 (block 64, scaler block 256): packed n/2, one int8 quantized scaler
// per 64-block, one bf16 quantization factor per block (a view into a (blocks/256, 256) bf16
// tensor: n/64 x 2 B), the bf16 scaler mean and the 16-entry bf16 NF4 table.
TEST(QuantizedLayouts, TorchaoNf4) {
  const int64_t blocks = kN / 64;
  EXPECT_EQ(TorchaoNf4Bytes(kN), kN / 2 + blocks + 2 * blocks + 2 + 16 * 2);
  EXPECT_EQ(TorchaoNf4Bytes(kN), 9175074);
}

// bitsandbytes Int8Params: int8 CB [out, in] and fp32 SCB [out].
TEST(QuantizedLayouts, Int8Rowwise) {
  EXPECT_EQ(Int8RowwiseBytes(kIn, kOut), kN + 4 * kOut);
  EXPECT_EQ(Int8RowwiseBytes(4096, 14336), 4096 * 14336 + 14336 * 4);
}

// auto_gptq QuantLinear (bits 4, group 128): qweight int32 [in/8, out] = n/2 B, qzeros int32
// [in/128, out/8] = 32 x 4096 / 2 B, scales fp16 [in/128, out] = 32 x 4096 x 2 B, g_idx int32 [in].
// AWQ's WQLinear_GEMM has the same buffers without g_idx.
TEST(QuantizedLayouts, GptqAndAwqGroups) {
  const int64_t groups = kIn / 128;  // 32
  const int64_t awq = kN / 2 + groups * kOut / 2 + groups * kOut * 2;
  EXPECT_EQ(GroupQuantBytes(kIn, kOut, 4, 128, /*g_idx=*/false), awq);
  EXPECT_EQ(GroupQuantBytes(kIn, kOut, 4, 128, /*g_idx=*/true), awq + 4 * kIn);
  EXPECT_EQ(awq, 8716288);
  // 8 bits: a byte per weight and per zero; group_size -1 (one group for the whole input).
  EXPECT_EQ(GroupQuantBytes(kIn, kOut, 8, -1, true), kN + kOut + 2 * kOut + 4 * kIn);
}

// MXFP4 (transformers integrations/mxfp4.py): per 32 weights 16 B of e2m1 pairs + 1 e8m0 scale.
// gpt-oss-20b's gate_up_proj of one expert, 5760 x 2880: blocks (5760, 90, 16) + scales (5760, 90).
TEST(QuantizedLayouts, Mxfp4Blocks) {
  EXPECT_EQ(Mxfp4Bytes(32), 17);
  EXPECT_EQ(Mxfp4Bytes(5760LL * 2880), 5760LL * 90 * 16 + 5760LL * 90);
}

}  // namespace
}  // namespace vramplan
