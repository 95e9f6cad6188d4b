#include "core/traffic_matrix.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <stdexcept>

#include "core/error.hpp"

namespace ccbench {

TrafficMatrix transpose(const TrafficMatrix& matrix) {
  TrafficMatrix out{matrix.ranks, std::vector<std::uint64_t>(matrix.bytes.size(), 0)};
  const auto n = static_cast<std::size_t>(matrix.ranks);
  for (std::size_t s = 0; s < n; ++s) {
    for (std::size_t d = 0; d < n; ++d) out.bytes[d * n + s] = matrix.bytes[s * n + d];
  }
  return out;
}

MatrixLoad load_of(const TrafficMatrix& matrix) {
  MatrixLoad load;
  const int n = matrix.ranks;
  if (n <= 0) return load;
  for (int r = 0; r < n; ++r) {
    std::uint64_t sent = 0, received = 0, sent_off = 0, received_off = 0;
    for (int p = 0; p < n; ++p) {
      sent += matrix.at(r, p);
      received += matrix.at(p, r);
      if (p != r) {
        sent_off += matrix.at(r, p);
        received_off += matrix.at(p, r);
      }
    }
    load.total_bytes += sent;
    load.off_rank_bytes += sent_off;
    // Ties keep the lowest rank, so the reported rank does not depend on anything but the matrix.
    if (std::max(sent, received) > load.most_loaded_bytes) {
      load.most_loaded_bytes = std::max(sent, received);
      load.most_loaded_rank = r;
    }
    if (std::max(sent_off, received_off) > load.most_loaded_off_rank_bytes) {
      load.most_loaded_off_rank_bytes = std::max(sent_off, received_off);
      load.most_loaded_off_rank_rank = r;
    }
  }
  load.mean_send_bytes = static_cast<double>(load.total_bytes) / n;
  load.mean_off_rank_send_bytes = static_cast<double>(load.off_rank_bytes) / n;
  load.imbalance = load.mean_send_bytes > 0 ? static_cast<double>(load.most_loaded_bytes) / load.mean_send_bytes : 0;
  return load;
}

AlltoallvCounts rank_counts(const TrafficMatrix& matrix, int rank, std::uint64_t element_bytes) {
  const int n = matrix.ranks;
  AlltoallvCounts out;
  const auto elements = [&](std::uint64_t bytes) {
    if (element_bytes == 0 || bytes % element_bytes != 0) {
      throw std::invalid_argument(
          fmt::format("{} bytes are not a whole number of {}-byte elements", bytes, element_bytes));
    }
    return bytes / element_bytes;
  };
  for (int p = 0; p < n; ++p) {
    out.send_displs.push_back(out.send_elements);
    out.send_counts.push_back(elements(matrix.at(rank, p)));
    out.send_elements += out.send_counts.back();
    out.recv_displs.push_back(out.recv_elements);
    out.recv_counts.push_back(elements(matrix.at(p, rank)));
    out.recv_elements += out.recv_counts.back();
    std::uint64_t offset = 0;  // peer p's blocks to ranks before this one
    for (int q = 0; q < rank; ++q) offset += elements(matrix.at(p, q));
    out.source_offsets.push_back(offset);
  }
  return out;
}

MatrixCase matrix_case(Op op, const TrafficMatrix& matrix, int rank, std::uint64_t element_bytes) {
  MatrixCase out;
  out.matrix = op == Op::moe_combine ? transpose(matrix) : matrix;
  out.counts = rank_counts(out.matrix, rank, element_bytes);
  if (op != Op::moe_pair) {
    out.load = load_of(out.matrix);
    return out;
  }
  const TrafficMatrix back = transpose(matrix);
  out.combine = rank_counts(back, rank, element_bytes);
  TrafficMatrix both = matrix;
  for (std::size_t i = 0; i < both.bytes.size(); ++i) both.bytes[i] += back.bytes[i];
  out.load = load_of(both);
  return out;
}

OpLayout matrix_layout(const MatrixCase& matrix_case, std::uint64_t element_bytes) {
  OpLayout layout;
  const auto n = static_cast<std::uint64_t>(matrix_case.matrix.ranks < 1 ? 1 : matrix_case.matrix.ranks);
  layout.bytes = matrix_case.load.total_bytes / n;
  layout.count = element_bytes > 0 ? layout.bytes / element_bytes : 0;
  layout.send_elements = matrix_case.counts.send_elements;
  layout.recv_elements = matrix_case.counts.recv_elements + matrix_case.combine.recv_elements;
  return layout;
}

namespace {

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

}  // namespace

TrafficMatrix parse_matrix_csv(std::string_view text, std::string_view path, int ranks, std::uint64_t element_bytes) {
  TrafficMatrix matrix{ranks, {}};
  const auto n = static_cast<std::size_t>(ranks);
  std::size_t line_number = 0;
  std::size_t rows = 0;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++line_number;
    const std::string_view content = trimmed(line);
    if (content.empty() || content.front() == '#') continue;
    if (rows == n) {
      throw UsageError(fmt::format("{}:{}: more than {} rows: the matrix must be N x N for the job's {} ranks", path,
                                   line_number, n, ranks));
    }
    std::size_t column = 0;
    std::string_view rest = line;
    while (true) {
      const std::size_t comma = rest.find(',');
      const std::string_view cell = trimmed(rest.substr(0, comma));
      ++column;
      if (column > n) {
        throw UsageError(fmt::format("{}:{}:{}: more than {} columns: the matrix must be N x N for the job's {} ranks",
                                     path, line_number, column, n, ranks));
      }
      std::uint64_t value = 0;
      const auto [at, ec] = std::from_chars(cell.data(), cell.data() + cell.size(), value);
      if (cell.empty() || ec != std::errc() || at != cell.data() + cell.size()) {
        const bool negative = !cell.empty() && cell.front() == '-';
        throw UsageError(fmt::format(
            "{}:{}:{}: '{}' is not {}", path, line_number, column, cell,
            negative ? "a byte count (counts must not be negative)" : "a byte count (a non-negative integer)"));
      }
      if (value % element_bytes != 0) {
        throw UsageError(fmt::format("{}:{}:{}: {} bytes is not a multiple of the {}-byte element", path, line_number,
                                     column, value, element_bytes));
      }
      matrix.bytes.push_back(value);
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    if (column != n) {
      throw UsageError(fmt::format("{}:{}: {} columns: the matrix must be N x N for the job's {} ranks", path,
                                   line_number, column, ranks));
    }
    ++rows;
  }
  if (rows != n) {
    throw UsageError(fmt::format("{}: {} rows: the matrix must be N x N for the job's {} ranks", path, rows, ranks));
  }
  return matrix;
}

}  // namespace ccbench
