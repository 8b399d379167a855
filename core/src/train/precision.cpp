#include "train/precision.h"

namespace vramplan {

PrecisionModel PrecisionFor(Precision p, bool autocast16) {
  PrecisionModel m;
  m.autocast16 = autocast16 && p != Precision::kFp32 && p != Precision::kAmpBf16 && p != Precision::kAmpFp16;
  switch (p) {
    case Precision::kFp32:
      break;
    case Precision::kFp16:
    case Precision::kBf16:
      m = PrecisionModel{2, 2, 0, 2, 2, 2, 2, 2, false, m.autocast16, true, p == Precision::kBf16 ? "bf16" : "fp16"};
      break;
    case Precision::kAmpFp16:
    case Precision::kAmpBf16:
      m = PrecisionModel{4, 4, 0, 4, 4, 2, 4, 4, true, false, true, p == Precision::kAmpBf16 ? "amp_bf16" : "amp_fp16"};
      break;
    case Precision::kMixedFp16:
    case Precision::kMixedBf16:
      m = PrecisionModel{2, 2, 4, 4, 2, 2, 2, 2, false, m.autocast16, true, p == Precision::kMixedBf16 ? "mixed_bf16" : "mixed_fp16"};
      break;
  }
  return m;
}

}  // namespace vramplan
