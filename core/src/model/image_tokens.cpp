#include "model/image_tokens.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "util/checked_math.h"

namespace vramplan {
namespace {

// Products of config-sized values (a pasted vision_config can name any size): checked.
using checked::Mul;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

// Python's round(): halves to even (std::nearbyint in the default rounding mode).
int64_t RoundHalfEven(double x) { return static_cast<int64_t>(std::nearbyint(x)); }

// LLaMA-Factory mm_plugin.py BasePlugin._preprocess_image: an image above image_max_pixels is
// scaled by sqrt(max / (w h)), each side truncated (int()).
void PreResize(int64_t max_pixels, int64_t* h, int64_t* w) {
  if (max_pixels <= 0 || (*h) * (*w) <= max_pixels) return;
  const double f = std::sqrt(static_cast<double>(max_pixels) / (static_cast<double>(*h) * static_cast<double>(*w)));
  *h = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(*h) * f));
  *w = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(*w) * f));
}

// transformers models/qwen2_vl/image_processing_qwen2_vl.py smart_resize(height, width, factor,
// min_pixels, max_pixels) with factor = patch_size x merge_size: both sides rounded to the factor,
// scaled down (floor) above max_pixels or up (ceil) below min_pixels.
void SmartResize(int64_t factor, int64_t min_pixels, int64_t max_pixels, int64_t* h, int64_t* w) {
  const double hd = static_cast<double>(*h), wd = static_cast<double>(*w), f = static_cast<double>(factor);
  int64_t hb = std::max<int64_t>(factor, RoundHalfEven(hd / f) * factor);
  int64_t wb = std::max<int64_t>(factor, RoundHalfEven(wd / f) * factor);
  if (hb * wb > max_pixels) {
    const double beta = std::sqrt(hd * wd / static_cast<double>(max_pixels));
    hb = std::max<int64_t>(factor, static_cast<int64_t>(std::floor(hd / beta / f)) * factor);
    wb = std::max<int64_t>(factor, static_cast<int64_t>(std::floor(wd / beta / f)) * factor);
  } else if (hb * wb < min_pixels) {
    const double beta = std::sqrt(static_cast<double>(min_pixels) / (hd * wd));
    hb = static_cast<int64_t>(std::ceil(hd * beta / f)) * factor;
    wb = static_cast<int64_t>(std::ceil(wd * beta / f)) * factor;
  }
  *h = hb;
  *w = wb;
}

// Qwen2-VL / Qwen2.5-VL / Qwen3-VL: an image is one temporal patch (the frame repeated temporal_patch_size
// times); grid_h x grid_w patches, merged m x m into LLM tokens. Defaults: the Hub's
// preprocessor_config.json (Qwen2-VL and Qwen2.5-VL min_pixels 3,136, max_pixels 12,845,056; Qwen3-VL
// size.shortest_edge 65,536, longest_edge 16,777,216).
ImageTokens Qwen(const VisionShape& s, int64_t h, int64_t w, int64_t max_pixels) {
  const bool qwen3 = s.kind == VisionKind::kQwen3Vl;
  const int64_t factor = s.patch * s.merge;
  const int64_t min_px = qwen3 ? 65536 : 3136;
  const int64_t max_px = max_pixels > 0 ? max_pixels : (qwen3 ? 16777216 : 12845056);
  SmartResize(factor, min_px, max_px, &h, &w);
  ImageTokens t;
  const int64_t gh = h / s.patch, gw = w / s.patch;
  t.patches = gh * gw;
  t.llm_tokens = t.patches / (s.merge * s.merge);
  t.sequences = 1;
  t.sequence_len = t.patches;
  t.pixel_values = Mul(t.patches, 3, s.temporal_patch, Mul(s.patch, s.patch));
  // LLaMA-Factory data/mm_plugin.py Qwen2VLPlugin.process_messages (also Qwen3-VL's): each image
  // becomes "<|vision_start|>" + image_seqlen x <|image_pad|> + "<|vision_end|>".
  t.markup_tokens = 2;
  if (s.window_size > 0 && s.full_attention_layers < s.layers) {
    // Qwen2_5_VisionTransformerPretrainedModel.get_window_index: windows of window_size / merge /
    // patch merged units a side, over the merged grid padded to whole windows.
    const int64_t win = std::max<int64_t>(1, s.window_size / s.merge / s.patch);
    const int64_t mh = gh / s.merge, mw = gw / s.merge;
    t.windows = CeilDiv(mh, win) * CeilDiv(mw, win);
    t.window_len = std::min(mh, win) * std::min(mw, win) * s.merge * s.merge;
  }
  return t;
}

// transformers models/llava_next/image_processing_llava_next.py select_best_resolution: the grid
// pinpoint keeping the most of the image (then wasting the least).
std::pair<int64_t, int64_t> BestResolution(int64_t h, int64_t w, const std::vector<std::pair<int64_t, int64_t>>& options) {
  std::pair<int64_t, int64_t> best = options.front();
  int64_t best_effective = -1, best_wasted = 0;
  for (const auto& [ph, pw] : options) {
    const double scale = std::min(static_cast<double>(pw) / static_cast<double>(w), static_cast<double>(ph) / static_cast<double>(h));
    const int64_t dw = static_cast<int64_t>(static_cast<double>(w) * scale), dh = static_cast<int64_t>(static_cast<double>(h) * scale);
    const int64_t effective = std::min(dw * dh, w * h);
    const int64_t wasted = ph * pw - effective;
    if (effective > best_effective || (effective == best_effective && wasted < best_wasted)) {
      best = {ph, pw};
      best_effective = effective;
      best_wasted = wasted;
    }
  }
  return best;
}

// LLaVA-NeXT anyres (processing_llava_next.py LlavaNextProcessor._get_number_of_features and
// _get_unpadded_features): the base image (side^2) plus the grid's features with the padding
// removed, one image_newline per remaining row. Default image_grid_pinpoints (LlavaNextConfig):
// [[336, 672], [672, 336], [672, 672], [1008, 336], [336, 1008]], i.e. in tiles 1x2, 2x1, 2x2, 3x1, 1x3.
ImageTokens LlavaNext(const VisionShape& s, int64_t h, int64_t w) {
  const int64_t tile = s.image_size, side = s.image_size / s.patch;
  std::vector<std::pair<int64_t, int64_t>> options = {{tile, 2 * tile}, {2 * tile, tile}, {2 * tile, 2 * tile}, {3 * tile, tile}, {tile, 3 * tile}};
  const auto [bh, bw] = BestResolution(h, w, options);
  int64_t cur_h = side * (bh / tile), cur_w = side * (bw / tile);
  const double original_aspect = static_cast<double>(w) / static_cast<double>(h);
  const double current_aspect = static_cast<double>(cur_w) / static_cast<double>(cur_h);
  if (original_aspect > current_aspect) {
    const int64_t new_h = static_cast<int64_t>(std::round(static_cast<double>(h) * (static_cast<double>(cur_w) / static_cast<double>(w)) * 1e7) / 1e7);
    cur_h -= ((cur_h - new_h) / 2) * 2;
  } else {
    const int64_t new_w = static_cast<int64_t>(std::round(static_cast<double>(w) * (static_cast<double>(cur_h) / static_cast<double>(h)) * 1e7) / 1e7);
    cur_w -= ((cur_w - new_w) / 2) * 2;
  }
  ImageTokens t;
  const int64_t tiles = (bh / tile) * (bw / tile) + 1;
  t.llm_tokens = Mul(cur_h, cur_w) + cur_h + Mul(side, side);
  t.sequences = tiles;
  t.sequence_len = Mul(side, side) + 1;
  t.patches = Mul(tiles, t.sequence_len);
  t.pixel_values = Mul(tiles, 3, tile, tile);
  return t;
}

// LLaVA-OneVision (transformers models/llava_onevision/processing_llava_onevision.py,
// LlavaOnevisionProcessor._get_number_of_features / _get_unpadded_features): the grid pinpoint
// select_best_resolution picks among the r x c tiles of image_size (the Hub configs' and
// LlavaOnevisionConfig's image_grid_pinpoints: every r, c in 1..6, here max_tiles a side), side^2
// features per tile with the padding rows or columns removed, one image_newline per remaining row;
// above 1.1 x the area of 9 tiles (anyres_max_9) both sides are divided by that ratio (floor) as
// LlavaOnevisionModel.pack_image_features interpolates them; plus the side^2 of the base image
// (SigLIP: no CLS, vision_feature_select_strategy "full"). The tower runs every tile and the base.
ImageTokens LlavaOnevision(const VisionShape& s, int64_t h, int64_t w) {
  const int64_t tile = s.image_size, side = s.image_size / s.patch;
  std::vector<std::pair<int64_t, int64_t>> options;
  for (int64_t r = 1; r <= s.max_tiles; ++r) {
    for (int64_t c = 1; c <= s.max_tiles; ++c) options.emplace_back(r * tile, c * tile);
  }
  const auto [bh, bw] = BestResolution(h, w, options);
  int64_t cur_h = side * (bh / tile), cur_w = side * (bw / tile);
  const double hd = static_cast<double>(h), wd = static_cast<double>(w);
  if (wd / hd > static_cast<double>(cur_w) / static_cast<double>(cur_h)) {
    const int64_t new_h = static_cast<int64_t>(hd * (static_cast<double>(cur_w) / wd));
    cur_h -= ((cur_h - new_h) / 2) * 2;
  } else {
    const int64_t new_w = static_cast<int64_t>(wd * (static_cast<double>(cur_h) / hd));
    cur_w -= ((cur_w - new_w) / 2) * 2;
  }
  int64_t unpadded = Mul(cur_h, cur_w), newlines = cur_h;
  const double ratio = std::sqrt(static_cast<double>(cur_h) * static_cast<double>(cur_w) / (9.0 * static_cast<double>(side * side)));
  if (ratio > 1.1) {
    const int64_t rh = static_cast<int64_t>(std::floor(static_cast<double>(cur_h) / ratio));
    const int64_t rw = static_cast<int64_t>(std::floor(static_cast<double>(cur_w) / ratio));
    unpadded = Mul(rh, rw);
    newlines = rh;
  }
  ImageTokens t;
  const int64_t tiles = (bh / tile) * (bw / tile) + 1;
  t.llm_tokens = unpadded + newlines + Mul(side, side);
  t.sequences = tiles;
  t.sequence_len = Mul(side, side);
  t.patches = Mul(tiles, t.sequence_len);
  t.pixel_values = Mul(tiles, 3, tile, tile);
  return t;
}

// LFM2-VL (transformers models/lfm2_vl/image_processing_lfm2_vl_fast.py Lfm2VlImageProcessorFast,
// processing_lfm2_vl.py expand_text_with_placeholders), f = patch x downsample_factor (32):
// smart_resize rounds both sides to f (Python's round) and scales them into [min, max]_image_tokens
// x f^2 pixels (Qwen's rule). An image whose rounded area exceeds max_image_tokens x f^2 x
// max_pixels_tolerance is split instead: find_closest_aspect_ratio picks the c x r grid (min_tiles
// <= c r <= max_tiles, by area, the closest width / height; on a tie a later grid wins while the
// image's area exceeds half the grid's) of tile_size tiles, each (tile / f)^2 tokens, plus the
// smart-resized thumbnail with use_thumbnail. Markup (use_image_special_tokens): <|image_start|>,
// one <|img_row_r_col_c|> per tile, <|img_thumbnail|>, <|image_end|>. Every tile (and the thumbnail)
// runs the tower padded to max_num_patches = max(max_image_tokens x downsample^2, (tile / patch)^2).
ImageTokens Lfm2Vl(const VisionShape& s, int64_t h, int64_t w) {
  const int64_t f = s.patch * s.merge;
  const int64_t max_px = Mul(s.tokens_per_image, f, f), min_px = Mul(s.min_tokens, f, f);
  const double hd = static_cast<double>(h), wd = static_cast<double>(w), fd = static_cast<double>(f);
  int64_t hb = std::max<int64_t>(f, RoundHalfEven(hd / fd) * f), wb = std::max<int64_t>(f, RoundHalfEven(wd / fd) * f);
  const bool large = s.split_tolerance > 0 && !(s.min_tiles == 1 && s.max_tiles == 1) &&
                     static_cast<double>(hb) * static_cast<double>(wb) > static_cast<double>(max_px) * s.split_tolerance;
  if (hb * wb > max_px) {
    const double beta = std::sqrt(hd * wd / static_cast<double>(max_px));
    hb = std::max<int64_t>(f, static_cast<int64_t>(std::floor(hd / beta / fd)) * f);
    wb = std::max<int64_t>(f, static_cast<int64_t>(std::floor(wd / beta / fd)) * f);
  } else if (hb * wb < min_px) {
    const double beta = std::sqrt(static_cast<double>(min_px) / (hd * wd));
    hb = static_cast<int64_t>(std::ceil(hd * beta / fd)) * f;
    wb = static_cast<int64_t>(std::ceil(wd * beta / fd)) * f;
  }
  const int64_t resized_tokens = Mul(CeilDiv(hb, f), CeilDiv(wb, f));
  const int64_t tile_side = s.image_size / s.patch;
  const int64_t padded = std::max(Mul(s.tokens_per_image, s.merge, s.merge), large || s.split_tolerance > 0 ? Mul(tile_side, tile_side) : 0);
  ImageTokens t;
  t.markup_tokens = 2;
  if (!large) {
    t.llm_tokens = resized_tokens;
    t.sequences = 1;
  } else {
    // _target_ratios: every (c, r) with min_tiles <= c r <= max_tiles, sorted by area.
    std::vector<std::pair<int64_t, int64_t>> ratios;
    for (int64_t area = s.min_tiles; area <= s.max_tiles; ++area) {
      for (int64_t c = 1; c <= area; ++c) {
        if (area % c == 0) ratios.emplace_back(c, area / c);
      }
    }
    const double aspect = wd / hd;
    double best_diff = 1e300;
    std::pair<int64_t, int64_t> best{1, 1};
    for (const auto& [c, r] : ratios) {
      const double diff = std::abs(aspect - static_cast<double>(c) / static_cast<double>(r));
      if (diff < best_diff) {
        best_diff = diff;
        best = {c, r};
      } else if (diff == best_diff && hd * wd > 0.5 * static_cast<double>(Mul(s.image_size, s.image_size, c * r))) {
        best = {c, r};
      }
    }
    const int64_t tiles = best.first * best.second;
    const bool thumb = s.thumbnail && tiles != 1;
    const int64_t per_tile = Mul(CeilDiv(tile_side, s.merge), CeilDiv(tile_side, s.merge));
    t.llm_tokens = Mul(tiles, per_tile) + (thumb ? resized_tokens : 0);
    t.markup_tokens += tiles + (thumb ? 1 : 0);
    t.sequences = tiles + (thumb ? 1 : 0);
  }
  t.sequence_len = padded;
  t.patches = Mul(t.sequences, padded);
  t.pixel_values = Mul(t.patches, 3, s.patch, s.patch);
  return t;
}

// Llama 4 (image_processing_llama4_fast.py get_best_fit) and mllama (image_processing_mllama.py
// get_optimal_tiled_canvas): among the canvases of r x c tiles (r c <= max tiles), the smallest
// upscale if any canvas holds the whole image, else the largest downscale; ties to the smaller area.
std::pair<int64_t, int64_t> BestCanvas(int64_t h, int64_t w, int64_t tile, int64_t max_tiles) {
  auto scale_of = [&](int64_t r, int64_t c) {
    return std::min(static_cast<double>(r * tile) / static_cast<double>(h), static_cast<double>(c * tile) / static_cast<double>(w));
  };
  double smallest_up = 0, largest_down = 0;
  bool have_up = false;
  for (int64_t r = 1; r <= max_tiles; ++r) {
    for (int64_t c = 1; r * c <= max_tiles; ++c) {
      const double sc = scale_of(r, c);
      if (sc >= 1) {
        if (!have_up || sc < smallest_up) smallest_up = sc;
        have_up = true;
      } else {
        largest_down = std::max(largest_down, sc);
      }
    }
  }
  const double chosen = have_up ? smallest_up : largest_down;
  std::pair<int64_t, int64_t> best{0, 0};
  for (int64_t r = 1; r <= max_tiles; ++r) {
    for (int64_t c = 1; r * c <= max_tiles; ++c) {
      if (scale_of(r, c) == chosen && (best.first == 0 || r * c < best.first * best.second)) best = {r, c};
    }
  }
  return best;
}

ImageTokens Tiled(const VisionShape& s, int64_t h, int64_t w) {
  const int64_t side = s.image_size / s.patch;
  ImageTokens t;
  if (s.kind == VisionKind::kMllama) {
    // mllama: the processor pads every image to max_num_tiles tiles (pack_images), each tile is
    // side^2 + 1 positions padded to a multiple of 8 in MllamaVisionModel.forward; the decoder
    // holds one <|image|> token and reads the tiles' states through cross-attention.
    const int64_t per_tile = Mul(side, side) + 1;
    t.llm_tokens = 1;
    t.sequences = 1;
    t.sequence_len = Mul(s.max_tiles, per_tile + (8 - per_tile % 8) % 8);
    t.patches = t.sequence_len;
    t.pixel_values = Mul(s.max_tiles, 3, s.image_size, s.image_size);
    t.cross_attention_states = Mul(s.max_tiles, per_tile);
    return t;
  }
  // Llama 4: r x c chunks plus a global chunk when r c > 1 (processing_llama4.py
  // _prompt_split_image), each (side^2 patches) x pixel_shuffle_ratio^2 (0.5: 144 tokens of a
  // 336-pixel chunk), with a tile separator after each chunk and image_start / image / image_end.
  const auto [r, c] = BestCanvas(h, w, s.image_size, s.max_tiles);
  const int64_t chunks = r * c + (r * c > 1 ? 1 : 0);
  const int64_t per_chunk = Mul(side, side) / 4;
  t.llm_tokens = Mul(chunks, per_chunk) + (r * c > 1 ? r * c : 0) + 3;
  t.sequences = chunks;
  t.sequence_len = Mul(side, side) + 1;
  t.patches = Mul(chunks, t.sequence_len);
  t.pixel_values = Mul(chunks, 3, s.image_size, s.image_size);
  return t;
}

// Pixtral / Mistral 3 (image_processing_pixtral.py get_resize_output_image_size; processing_mistral3.py):
// scaled down to fit image_size (the longest edge, 1540) then to whole patches (ceil); every row of
// merge x merge patches is a row of [IMG] tokens ended by [IMG_BREAK] (the last by [IMG_END]).
ImageTokens Pixtral(const VisionShape& s, int64_t h, int64_t w) {
  const double ratio = std::max(static_cast<double>(h) / static_cast<double>(s.image_size),
                                static_cast<double>(w) / static_cast<double>(s.image_size));
  if (ratio > 1) {
    h = static_cast<int64_t>(std::floor(static_cast<double>(h) / ratio));
    w = static_cast<int64_t>(std::floor(static_cast<double>(w) / ratio));
  }
  const int64_t ph = CeilDiv(h, s.patch), pw = CeilDiv(w, s.patch);
  const int64_t rows = ph * s.patch / (s.patch * s.merge), cols = pw * s.patch / (s.patch * s.merge);
  ImageTokens t;
  t.llm_tokens = Mul(rows, cols) + rows;
  t.sequences = 1;
  t.sequence_len = Mul(ph, pw);
  t.patches = t.sequence_len;
  t.pixel_values = Mul(3, t.patches, s.patch, s.patch);
  return t;
}

// Idefics3 / SmolVLM (transformers models/idefics3/image_processing_idefics3.py, with do_resize and
// do_image_splitting, the processors' defaults): the image is scaled so its longest edge is
// size.longest_edge (_resize_output_size_rescale_to_max_len: the other side int()-truncated, then
// rounded up to even; at most 4096, _resize_output_size_scale_below_upper_bound), then
// resize_for_vision_encoder rounds the longest side up to a multiple of max_image_size M, sets the
// other from the aspect ratio (int()) and rounds it up too; split_image cuts rows x cols tiles of M
// plus the whole image resized to M x M. M is vision_config.image_size and size.longest_edge 4 M (the
// Hub preprocessor_config.json of SmolVLM-256M / 500M: 2048 / 512, SmolVLM-Instruct: 1536 / 384,
// Idefics3-8B: 1456 / 364). Each tile gives (M / patch)^2 / scale_factor^2 image tokens
// (Idefics3Connector.pixel_shuffle). processing_idefics3.py _prompt_split_image writes
// <fake_token_around_image><row_r_col_c> before each tile's tokens, "\n" after each row, then
// "\n<fake_token_around_image><global-img>" + tokens + "<fake_token_around_image>": 2 r c + r + 3
// markup tokens (the last row's "\n" and the next one are one "\n\n" token of SmolLM2's and Llama 3's
// vocabularies; derived, not measured).
ImageTokens Idefics3(const VisionShape& s, int64_t h, int64_t w) {
  const int64_t tile = s.image_size, longest = 4 * s.image_size;
  const auto even_up = [](int64_t v) { return v % 2 != 0 ? v + 1 : v; };
  double aspect = static_cast<double>(w) / static_cast<double>(h);
  if (w >= h) {
    w = longest, h = even_up(static_cast<int64_t>(static_cast<double>(w) / aspect));
  } else {
    h = longest, w = even_up(static_cast<int64_t>(static_cast<double>(h) * aspect));
  }
  h = std::max<int64_t>(h, 1), w = std::max<int64_t>(w, 1);
  aspect = static_cast<double>(w) / static_cast<double>(h);
  constexpr int64_t kMaxImageSize = 4096;  // image_processing_idefics3.py MAX_IMAGE_SIZE
  if (w >= h && w > kMaxImageSize) {
    w = kMaxImageSize, h = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(w) / aspect));
  } else if (h > w && h > kMaxImageSize) {
    h = kMaxImageSize, w = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(h) * aspect));
  }
  aspect = static_cast<double>(w) / static_cast<double>(h);
  if (w >= h) {
    w = CeilDiv(w, tile) * tile;
    h = CeilDiv(std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(w) / aspect)), tile) * tile;
  } else {
    h = CeilDiv(h, tile) * tile;
    w = CeilDiv(std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(h) * aspect)), tile) * tile;
  }
  const int64_t rows = h > tile || w > tile ? h / tile : 0, cols = h > tile || w > tile ? w / tile : 0;
  const int64_t side = tile / s.patch;
  const int64_t per_tile = Mul(side, side) / (s.merge * s.merge);
  ImageTokens t;
  t.sequences = Mul(rows, cols) + 1;
  t.sequence_len = Mul(side, side);
  t.patches = Mul(t.sequences, t.sequence_len);
  t.llm_tokens = Mul(t.sequences, per_tile);
  t.pixel_values = Mul(t.sequences, 3, tile, tile);
  // _prompt_single_image (no split): <fake_token_around_image><global-img> tokens <fake_token_around_image>.
  t.markup_tokens = rows == 0 ? 3 : Mul(2, rows, cols) + rows + 3;
  return t;
}

// GotOcr2ImageProcessor's tiling (transformers models/got_ocr2/image_processing_got_ocr2.py,
// crop_to_patches, max_patches 12, min_patches 1), used by InternVL and Aya Vision:
// get_optimal_tiled_canvas takes the grids of c columns x r rows with 1 <= c r <= max_patches
// (get_all_supported_aspect_ratios: c outer, r inner, then a stable sort by c r) and keeps the first
// whose c / r is closest to width / height; on an equal difference a later grid wins while the
// image's area exceeds half the grid's (0.5 x tile^2 x c r). crop_image_to_patches cuts c r tiles of
// image_size from the image resized to the grid, plus a thumbnail of the whole image when c r > 1.
// Returns the tiles the tower runs (crops + thumbnail).
int64_t GotOcr2Tiles(const VisionShape& s, int64_t h, int64_t w) {
  const double aspect = static_cast<double>(w) / static_cast<double>(h);
  const double area = static_cast<double>(h) * static_cast<double>(w);
  const double tile_area = static_cast<double>(s.image_size) * static_cast<double>(s.image_size);
  std::vector<std::pair<int64_t, int64_t>> grids;
  for (int64_t c = 1; c <= s.max_tiles; ++c) {
    for (int64_t r = 1; c * r <= s.max_tiles; ++r) grids.emplace_back(c, r);
  }
  std::stable_sort(grids.begin(), grids.end(), [](const auto& a, const auto& b) { return a.first * a.second < b.first * b.second; });
  double best_diff = 0;
  std::pair<int64_t, int64_t> best{1, 1};
  bool first = true;
  for (const auto& [c, r] : grids) {
    const double diff = std::abs(aspect - static_cast<double>(c) / static_cast<double>(r));
    if (first || diff < best_diff) {
      best_diff = diff, best = {c, r}, first = false;
    } else if (diff == best_diff && area > 0.5 * tile_area * static_cast<double>(c * r)) {
      best = {c, r};
    }
  }
  const int64_t crops = best.first * best.second;
  return crops + (crops > 1 ? 1 : 0);
}

// InternVL (transformers models/internvl/processing_internvl.py InternVLProcessor: crop_to_patches
// true in InternVLProcessorKwargs' defaults; GotOcr2Tiles above). The tower runs each tile as
// (side^2 + 1) positions (a CLS token), which vision_feature_select_strategy "default" drops before
// the pixel shuffle folds merge x merge patches into a token (448 / 14 = 32, 32^2 / 4 = 256 per
// tile); _insert_media_placeholders writes <img> + 256 x tiles <IMG_CONTEXT> + </img>: 2 markup tokens.
ImageTokens InternVl(const VisionShape& s, int64_t h, int64_t w) {
  const int64_t tiles = GotOcr2Tiles(s, h, w);
  const int64_t side = s.image_size / s.patch;
  ImageTokens t;
  t.sequences = tiles;
  t.sequence_len = Mul(side, side) + 1;
  t.patches = Mul(tiles, t.sequence_len);
  t.llm_tokens = Mul(tiles, Mul(side, side) / (s.merge * s.merge));
  t.pixel_values = Mul(tiles, 3, s.image_size, s.image_size);
  t.markup_tokens = 2;
  return t;
}

// Aya Vision (transformers models/aya_vision/processing_aya_vision.py AyaVisionProcessor: its image
// processor is GotOcr2ImageProcessor with crop_to_patches, the Hub preprocessor_config.json's 364-px
// tiles and max_patches 12; GotOcr2Tiles above). SigLIP has no CLS: each tile is side^2 positions
// (26^2 = 676), pixel-shuffled by downsample_factor into (image_size / (patch x f))^2 tokens (169).
// _prompt_split_image writes <|START_OF_IMG|>, then TILE_i + 169 <|IMG_PATCH|> per crop (i = 1 ..
// tiles - 1), TILE_GLOBAL + 169 for the thumbnail (the only tile of a 1 x 1 grid), <|END_OF_IMG|>:
// tiles + 2 markup tokens (each tile marker one vocabulary id, as the processor's
// _set_image_token_ids looks them up).
ImageTokens AyaVision(const VisionShape& s, int64_t h, int64_t w) {
  const int64_t tiles = GotOcr2Tiles(s, h, w);
  const int64_t side = s.image_size / s.patch;
  const int64_t per_tile = s.image_size / (s.patch * s.merge);
  ImageTokens t;
  t.sequences = tiles;
  t.sequence_len = Mul(side, side);
  t.patches = Mul(tiles, t.sequence_len);
  t.llm_tokens = Mul(tiles, per_tile, per_tile);
  t.pixel_values = Mul(tiles, 3, s.image_size, s.image_size);
  t.markup_tokens = tiles + 2;
  return t;
}

// Kimi-VL (vLLM model_executor/models/kimi_vl.py KimiVLProcessingInfo.get_num_image_tokens, the Hub's
// KimiVLImageProcessor.rescale with pad_input): an image of more than in_token_limit patches
// ((w // 14) x (h // 14)) is scaled by sqrt(limit / patches), each side int()-truncated; both sides are
// then padded up to a multiple of merge x patch (28). MoonViT runs the (h / 14) x (w / 14) patches as
// one sequence and patch_merger folds 2 x 2 of them into a token. vLLM's placeholder
// "<|media_start|>image<|media_content|><|media_pad|><|media_end|>" expands <|media_pad|> to the
// tokens: 4 markup tokens ("image" taken as one token of the vocabulary; derived, not measured).
ImageTokens KimiVl(const VisionShape& s, int64_t h, int64_t w) {
  const int64_t grid = Mul(w / s.patch, h / s.patch);
  if (s.patch_limit > 0 && grid > s.patch_limit) {
    const double scale = std::sqrt(static_cast<double>(s.patch_limit) / static_cast<double>(grid));
    w = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(w) * scale));
    h = std::max<int64_t>(1, static_cast<int64_t>(static_cast<double>(h) * scale));
  }
  const int64_t unit = s.patch * s.merge;
  const int64_t gh = CeilDiv(h, unit) * s.merge, gw = CeilDiv(w, unit) * s.merge;
  ImageTokens t;
  t.sequences = 1;
  t.patches = Mul(gh, gw);
  t.sequence_len = t.patches;
  t.llm_tokens = Mul(gh / s.merge, gw / s.merge);
  t.pixel_values = Mul(t.patches, 3, s.patch * s.patch);
  t.markup_tokens = 4;
  return t;
}

// GLM-4.1V / GLM-4.5V (transformers models/glm4v/image_processing_glm4v.py smart_resize, called with
// num_frames = temporal_factor = 2 for an image): a side under the factor (patch x merge = 28) scales
// both up first (int()); each side round(side / 28) x 28 (Python's round); when 2 x h x w is above
// max_pixels both sides floor(side / beta / 28) x 28 with beta = sqrt(2 h w / max_pixels), below
// min_pixels ceil(side x beta / 28) x 28 with beta = sqrt(min_pixels / (2 h w)). The Hub's
// preprocessor_config.json of GLM-4.1V / GLM-4.5V: size.shortest_edge 12,544 (min_pixels),
// size.longest_edge 9,633,792 (max_pixels). (h / 14) x (w / 14) patches, 2 x 2 to a token; the chat
// template wraps the <|image|> tokens in <|begin_of_image|> / <|end_of_image|>: 2 markup tokens.
ImageTokens Glm4v(const VisionShape& s, int64_t h, int64_t w) {
  constexpr double kMinPixels = 12544, kMaxPixels = 9633792;
  const int64_t factor = s.patch * s.merge;
  const double f = static_cast<double>(factor);
  double hd = static_cast<double>(h), wd = static_cast<double>(w);
  if (h < factor || w < factor) {
    const double scale = std::max(f / hd, f / wd);
    hd = std::floor(hd * scale), wd = std::floor(wd * scale);
  }
  int64_t hb = RoundHalfEven(hd / f) * factor, wb = RoundHalfEven(wd / f) * factor;
  const double frames = static_cast<double>(s.temporal_patch);
  if (frames * static_cast<double>(hb) * static_cast<double>(wb) > kMaxPixels) {
    const double beta = std::sqrt(frames * hd * wd / kMaxPixels);
    hb = std::max<int64_t>(factor, static_cast<int64_t>(std::floor(hd / beta / f)) * factor);
    wb = std::max<int64_t>(factor, static_cast<int64_t>(std::floor(wd / beta / f)) * factor);
  } else if (frames * static_cast<double>(hb) * static_cast<double>(wb) < kMinPixels) {
    const double beta = std::sqrt(kMinPixels / (frames * hd * wd));
    hb = static_cast<int64_t>(std::ceil(hd * beta / f)) * factor;
    wb = static_cast<int64_t>(std::ceil(wd * beta / f)) * factor;
  }
  ImageTokens t;
  const int64_t gh = hb / s.patch, gw = wb / s.patch;
  t.sequences = 1;
  t.patches = Mul(gh, gw);
  t.sequence_len = t.patches;
  t.llm_tokens = t.patches / (s.merge * s.merge);
  t.pixel_values = Mul(t.patches, 3, s.temporal_patch, s.patch * s.patch);
  t.markup_tokens = 2;
  return t;
}

// Towers with one fixed-size input: LLaVA (CLIP side^2 + CLS; the default `vision_feature_select_strategy`
// drops the CLS), Gemma 3 (SigLIP side^2 patches pooled to mm_tokens_per_image), Gemma 4, Gemma 3n
// (MobileNetV5's 16 x 16 output grid of a 768 x 768 image, vision_soft_tokens_per_image), the plain
// SigLIP towers (kSiglip: tokens_per_image of side^2 patches; PaliGemma: all, PaliGemmaConfig
// num_image_tokens, processing_paligemma.py build_string_from_input puts image_seq_length <image>
// tokens before the BOS and the prompt, no markup; LLaVA with SigLIP: per vision_feature_select_strategy).
ImageTokens Fixed(const VisionShape& s) {
  ImageTokens t;
  t.sequences = 1;
  if (s.kind == VisionKind::kGemma4) {
    t.llm_tokens = s.tokens_per_image;
    t.patches = Mul(s.tokens_per_image, s.merge, s.merge);
    t.sequence_len = t.patches;
    t.pixel_values = Mul(3, t.patches, s.patch, s.patch);
    // transformers models/gemma4/processing_gemma4.py Gemma4Processor.replace_image_token:
    // boi_token + num_soft_tokens x image_token + eoi_token.
    t.markup_tokens = 2;
    return t;
  }
  const int64_t side = s.image_size / s.patch;
  const bool cls = s.kind == VisionKind::kLlava;
  t.patches = Mul(side, side) + (cls ? 1 : 0);
  t.sequence_len = t.patches;
  const bool gemma = s.kind == VisionKind::kGemma3 || s.kind == VisionKind::kGemma3n;
  t.llm_tokens = gemma || s.kind == VisionKind::kSiglip ? s.tokens_per_image : Mul(side, side);
  t.pixel_values = Mul(3, s.image_size, s.image_size);
  // transformers models/gemma3/processing_gemma3.py Gemma3Processor.__init__ full_image_sequence:
  // "\n\n" + boi_token + mm_tokens_per_image x image_token + eoi_token + "\n\n", and "\n\n" is
  // one token of Gemma's vocabulary. LLaVA's "<image>" expands to the features alone.
  // Gemma3nProcessor (processing_gemma3n.py) builds the same full_image_sequence.
  if (gemma) t.markup_tokens = 4;
  return t;
}

}  // namespace

ImageTokens TokensForImage(const VisionShape& shape, int64_t height, int64_t width, int64_t max_pixels) {
  if (shape.kind == VisionKind::kNone || shape.patch <= 0 || height <= 0 || width <= 0) return {};
  const bool qwen = shape.kind == VisionKind::kQwen2Vl || shape.kind == VisionKind::kQwen25Vl || shape.kind == VisionKind::kQwen3Vl;
  if (qwen) return Qwen(shape, height, width, max_pixels);
  PreResize(max_pixels, &height, &width);
  switch (shape.kind) {
    case VisionKind::kLlavaNext: return LlavaNext(shape, height, width);
    case VisionKind::kLlavaOnevision: return LlavaOnevision(shape, height, width);
    case VisionKind::kLfm2Vl: return Lfm2Vl(shape, height, width);
    case VisionKind::kLlama4:
    case VisionKind::kMllama: return Tiled(shape, height, width);
    case VisionKind::kPixtral: return Pixtral(shape, height, width);
    case VisionKind::kIdefics3: return Idefics3(shape, height, width);
    case VisionKind::kInternVl: return InternVl(shape, height, width);
    case VisionKind::kAyaVision: return AyaVision(shape, height, width);
    case VisionKind::kKimiVl: return KimiVl(shape, height, width);
    case VisionKind::kGlm4v: return Glm4v(shape, height, width);
    default: return Fixed(shape);
  }
}

ImageTokens LargestImage(const VisionShape& shape, int64_t max_pixels) {
  switch (shape.kind) {
    case VisionKind::kNone: return {};
    case VisionKind::kQwen2Vl:
    case VisionKind::kQwen25Vl:
    case VisionKind::kQwen3Vl: {
      const int64_t cap = max_pixels > 0 ? max_pixels : (shape.kind == VisionKind::kQwen3Vl ? 16777216 : 12845056);
      // vLLM's Qwen2VLProcessingInfo.get_image_size_with_most_features: smart_resize of a
      // 9,999,999-pixel square under max_pixels.
      return TokensForImage(shape, 9999999, 9999999, cap);
    }
    case VisionKind::kLlavaNext: {
      ImageTokens best;
      const int64_t t = shape.image_size;
      for (const auto& [h, w] : std::vector<std::pair<int64_t, int64_t>>{{t, 2 * t}, {2 * t, t}, {2 * t, 2 * t}, {3 * t, t}, {t, 3 * t}}) {
        ImageTokens x = TokensForImage(shape, h, w);
        if (x.llm_tokens > best.llm_tokens) best = x;
      }
      return best;
    }
    case VisionKind::kLlavaOnevision: {
      // The largest grid (max_tiles x max_tiles tiles) runs the most tiles through the tower.
      const int64_t side = shape.image_size * shape.max_tiles;
      return TokensForImage(shape, side, side);
    }
    case VisionKind::kLfm2Vl:
      // The most tiles: max_tiles of them in a row (a c x 1 grid of the image's own aspect).
      return TokensForImage(shape, shape.image_size, shape.image_size * shape.max_tiles);
    case VisionKind::kLlama4: {
      const int64_t side = shape.image_size * 4;  // a 4 x 4 canvas: max_patches 16
      return TokensForImage(shape, side, side);
    }
    case VisionKind::kPixtral: return TokensForImage(shape, shape.image_size, shape.image_size);
    case VisionKind::kIdefics3: {
      // A square image fills the 4 x 4 tiles of the longest edge (4 x image_size).
      const int64_t side = shape.image_size * 4;
      return TokensForImage(shape, side, side);
    }
    case VisionKind::kGlm4v: return TokensForImage(shape, 9999999, 9999999);  // scaled down to max_pixels
    case VisionKind::kInternVl:
    case VisionKind::kAyaVision:
      // A 4:3 image fills the 4 x 3 grid (the only grid of that ratio within 12 tiles): 12 tiles + the thumbnail.
      return TokensForImage(shape, 3 * shape.image_size, 4 * shape.image_size);
    case VisionKind::kKimiVl:
      // vLLM's KimiVLDummyInputsBuilder profiles a 1024 x 1024 image (MaxImageTokenMeta): scaled to
      // 897 x 897 under in_token_limit 4096 and padded to 924: 66 x 66 patches, 1,089 tokens.
      return TokensForImage(shape, 1024, 1024);
    default: return TokensForImage(shape, shape.image_size > 0 ? shape.image_size : 1, shape.image_size > 0 ? shape.image_size : 1);
  }
}

void QwenSmartResize(int64_t factor, int64_t min_pixels, int64_t max_pixels, int64_t* height, int64_t* width) {
  SmartResize(factor, min_pixels, max_pixels, height, width);
}

}  // namespace vramplan
