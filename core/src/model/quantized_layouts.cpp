#include "model/quantized_layouts.h"
#include "units.h"

namespace vramplan {

int64_t Nf4Bytes(int64_t n, bool double_quant) {
  const int64_t blocks = (n + 63) / 64;
  int64_t bytes = (n + 1) / 2 + 64;  // packed weights + NF4 code (16 x fp32)
  if (double_quant) {
    bytes += blocks + 4 * ((blocks + 255) / 256) + 4 + 1024;  // uint8 absmax, fp32 absmax2, offset, code2
  } else {
    bytes += 4 * blocks;
  }
  return bytes;
}

int64_t TorchaoNf4Bytes(int64_t n) {
  const int64_t blocks = (n + 63) / 64;
  return (n + 1) / 2 + blocks + 2 * blocks + 2 + 32;
}

int64_t Int8RowwiseBytes(int64_t in, int64_t out) { return in * out + 4 * out; }

int64_t GroupQuantBytes(int64_t in, int64_t out, int bits, int group_size, bool g_idx) {
  const int64_t groups = group_size <= 0 ? 1 : CeilDiv(in, group_size);
  return in * out * bits / 8 + groups * out * bits / 8 + groups * out * 2 + (g_idx ? 4 * in : 0);
}

int64_t Mxfp4Bytes(int64_t n) { return CeilDiv(n, 32) * 17; }

}  // namespace vramplan
