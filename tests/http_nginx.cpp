#include "http_nginx.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>
#include <pwd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <thread>

#include <fmt/format.h>

namespace zarrdirect::test {
namespace {

namespace fs = std::filesystem;

// A port free when probed (nginx binds it moments later; a clash makes the start fail and retry).
int free_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = 0;
  ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address));
  socklen_t length = sizeof(address);
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  return ntohs(address.sin_port);
}

bool accepts(int port) {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  ::close(fd);
  return ok;
}

std::string config(const fs::path& tmp, int port, const fs::path& root) {
  // Started as root, the workers would become "nobody" and miss private folders: they stay us.
  std::string user;
  if (::geteuid() == 0)
    if (const passwd* entry = ::getpwuid(::geteuid())) user = fmt::format("user {};", entry->pw_name);
  const std::string t = tmp.string();
  return fmt::format(R"({user}
daemon off;
worker_processes 2;
pid {t}/nginx.pid;
error_log {t}/error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log {t}/access.log;
  client_body_temp_path {t}/client_body;
  proxy_temp_path {t}/proxy;
  fastcgi_temp_path {t}/fastcgi;
  uwsgi_temp_path {t}/uwsgi;
  scgi_temp_path {t}/scgi;
  default_type application/octet-stream;
  sendfile on;
  keepalive_requests 1000000;
  server {{
    listen 127.0.0.1:{port};
    root {root};
    location / {{ }}
    # The same files behind a required header: how the tests see StoreOptions and --header sent.
    location /private/ {{
      if ($http_x_zarrdirect_key != "k1") {{ return 403; }}
      alias {root}/;
    }}
  }}
}}
)",
                     fmt::arg("user", user), fmt::arg("t", t), fmt::arg("port", port),
                     fmt::arg("root", fs::absolute(root).string()));
}

}  // namespace

std::optional<std::string> NginxServer::find() {
  for (const char* candidate : {"/usr/sbin/nginx", "/usr/bin/nginx"})
    if (::access(candidate, X_OK) == 0) return std::string(candidate);
  return std::nullopt;
}

NginxServer::NginxServer(const fs::path& root) {
  auto nginx = find();
  if (!nginx) throw std::runtime_error("nginx not found");
  std::string pattern = (fs::temp_directory_path() / "zarrdirect-nginx-XXXXXX").string();
  if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  tmp_ = pattern;
  for (int attempt = 0; attempt < 5; ++attempt) {
    const int port = free_port();
    const fs::path conf = tmp_ / "nginx.conf";
    std::ofstream(conf) << config(tmp_, port, root);
    const std::string prefix = tmp_.string(), errors = (tmp_ / "error.log").string(), conf_text = conf.string();
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl(nginx->c_str(), nginx->c_str(), "-p", prefix.c_str(), "-e", errors.c_str(), "-c", conf_text.c_str(),
              static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        break;
      }
      if (accepts(port)) {
        url_ = fmt::format("http://127.0.0.1:{}", port);
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
  }
  std::error_code ignored;
  fs::remove_all(tmp_, ignored);
  throw std::runtime_error("nginx did not start");
}

NginxServer::~NginxServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGTERM);
    int status = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (::waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  std::error_code ignored;
  fs::remove_all(tmp_, ignored);
}

std::vector<std::string> NginxServer::requests() const {
  std::vector<std::string> lines;
  std::ifstream log(tmp_ / "access.log");
  for (std::string line; std::getline(log, line);) {
    auto open = line.find('"');
    auto close = open == std::string::npos ? open : line.find('"', open + 1);
    if (close != std::string::npos) lines.push_back(line.substr(open + 1, close - open - 1));
  }
  return lines;
}

}  // namespace zarrdirect::test
