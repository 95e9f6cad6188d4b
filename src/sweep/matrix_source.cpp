#include "sweep/matrix_source.hpp"

#include <fmt/format.h>
#include <openssl/evp.h>

#include "core/error.hpp"
#include "core/input_file.hpp"
#include "core/moe_router.hpp"

namespace ccbench {
namespace {

std::string sha256_hex(const std::string& data) {
  unsigned char digest[EVP_MAX_MD_SIZE] = {};
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), digest, &length, EVP_sha256(), nullptr) != 1) {
    throw std::runtime_error("SHA-256 of the matrix file failed");
  }
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

}  // namespace

MatrixSource matrix_source(const RunConfig& config, Op op, int nranks) {
  const std::uint64_t element_bytes = info(config.dtype).size_bytes;
  MatrixSource out;
  if (op == Op::alltoallv) {
    if (config.matrix_path.empty()) throw UsageError("--ops alltoallv needs --matrix FILE.csv");
    std::string text;
    try {
      text = read_input_file(config.matrix_path);
    } catch (const ParseError& e) {
      throw UsageError(std::string("--matrix: ") + e.what());
    }
    out.matrix = parse_matrix_csv(text, config.matrix_path, nranks, element_bytes);
    out.source = {{"file", config.matrix_path}, {"sha256", sha256_hex(text)}};
    return out;
  }
  if (config.moe.empty()) throw UsageError(fmt::format("--ops {} needs --moe SPEC", name(op)));
  const MoeSpec spec = parse_moe_spec(config.moe);
  const MoeRoute route = route_tokens(spec, nranks, config.seed);
  out.matrix = dispatch_matrix(route, spec.hidden, element_bytes);
  out.source = {{"moe", spec.text}, {"routing", name(spec.routing)}, {"seed", config.seed}};
  if (spec.routing == MoeRouting::hot) {
    // What the generator drew against what it was asked for (docs/method.md: its sampling error).
    const double tokens = static_cast<double>(spec.tokens_per_rank) * nranks;
    out.source["hot_fraction_drawn"] = static_cast<double>(route.hot_first_choices) / tokens;
  }
  return out;
}

}  // namespace ccbench
