#include "conformance_cases.hpp"

#include <algorithm>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "test_support.hpp"
#include "zarrdirect/group.hpp"

namespace zarrdirect::test {

namespace fs = std::filesystem;

std::vector<ConformanceCase> conformance_cases() {
  const fs::path root = conformance_dir();
  if (!fs::is_directory(root)) throw std::runtime_error("the conformance corpus is missing: " + root.string());
  std::vector<fs::path> dirs;
  for (const auto& writer : fs::directory_iterator(root))
    if (writer.is_directory())
      for (const auto& dir : fs::directory_iterator(writer.path()))
        if (fs::exists(dir.path() / "case.json")) dirs.push_back(dir.path());
  std::sort(dirs.begin(), dirs.end());
  std::vector<ConformanceCase> cases;
  for (const auto& dir : dirs) {
    const std::string name = dir.parent_path().filename().string() + "/" + dir.filename().string();
    if (fs::exists(dir / "array")) {
      cases.push_back({name, name, dir / "array", dir / "expected.npy"});
      continue;
    }
    if (!fs::exists(dir / "group")) throw std::runtime_error("conformance case " + name + " has neither array/ nor group/");
    // A multiscale group: each level against expected_levelN.npy, levels found through the
    // library's OME-Zarr reader.
    Multiscale image = Multiscale::open(dir / "group");
    for (std::size_t level = 0; level < image.levels().size(); ++level)
      cases.push_back({fmt::format("{} level {}", name, level), name, image.level_path(level),
                       dir / fmt::format("expected_level{}.npy", level)});
  }
  if (cases.empty()) throw std::runtime_error("no conformance cases found under " + root.string());
  return cases;
}

const std::map<std::string, std::string>& expected_refusals() {
  static const std::map<std::string, std::string> refusals = [] {
    std::map<std::string, std::string> listed;
    const fs::path file = conformance_dir() / "expected_refusals.json";
    std::ifstream in(file);
    if (!in) throw std::runtime_error("cannot open " + file.string());
    const auto doc = nlohmann::json::parse(in);
    for (const auto& entry : doc.at("refusals"))
      listed.emplace(entry.at("case").get<std::string>(), entry.at("reason").get<std::string>());
    return listed;
  }();
  return refusals;
}

std::optional<std::string> expected_refusal(const std::string& listed_name) {
  const auto& listed = expected_refusals();
  auto found = listed.find(listed_name);
  if (found == listed.end()) return std::nullopt;
  return found->second;
}

}  // namespace zarrdirect::test
