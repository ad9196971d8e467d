// The display form of a store URL (rl_store_display_url): every shape of
// tests/data/url_shapes.yaml shows exactly its `display`, and no surface of
// the C ABI (the display string, the error of a refused open, the error of a
// failed call, the metrics text) shows any of its `secrets`.
#include "config/url_display.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "capi_helpers.h"
#include "config/settings.h"
#include "config/url.h"
#include "error.h"
#include "rl/rl.h"

namespace {

struct Shape {
  std::string name;
  std::string url;
  std::string display;
  std::vector<std::string> secrets;
  std::string refused;  // "" when the shape has none
  bool opens = true;
};

std::vector<Shape> shapes() {
  std::vector<Shape> out;
  for (const YAML::Node& node : YAML::LoadFile(RL_URL_SHAPES)["shapes"]) {
    Shape s;
    s.name = node["name"].as<std::string>();
    s.url = node["url"].as<std::string>();
    s.display = node["display"].as<std::string>();
    s.secrets = node["secrets"].as<std::vector<std::string>>();
    if (node["refused"]) s.refused = node["refused"].as<std::string>();
    if (node["opens"]) s.opens = node["opens"].as<bool>();
    out.push_back(std::move(s));
  }
  return out;
}

void expect_no_secret(const Shape& shape, const std::string& text, const char* surface) {
  for (const std::string& secret : shape.secrets) {
    EXPECT_EQ(text.find(secret), std::string::npos)
        << shape.name << ": " << surface << " shows '" << secret << "': " << text;
  }
}

// The message of an open that must fail.
std::string refused_open(const Shape& shape, const std::string& url) {
  rl_store* store = nullptr;
  rl_error* err = nullptr;
  EXPECT_EQ(rl_store_open(url.c_str(), nullptr, &store, &err), RL_E_INVALID_ARG) << shape.name;
  rl_store_free(store);
  std::string message = rl_error_message(err);
  rl_error_free(err);
  return message;
}

TEST(UrlDisplay, TheTableHasEveryShape) {
  // The shapes issue 19 lists, and a few more.
  EXPECT_GE(shapes().size(), 12u);
}

TEST(UrlDisplay, TheCoreRendersEachShapeAsTheTableSays) {
  for (const Shape& shape : shapes()) {
    const std::string shown = rl::display_url(std::string_view(shape.url));
    EXPECT_EQ(shown, shape.display) << shape.name;
    expect_no_secret(shape, shown, "display_url");
    // The display form is a URL too, and shows as itself.
    EXPECT_EQ(rl::display_url(std::string_view(shape.display)), shape.display) << shape.name;
  }
}

TEST(UrlDisplay, EverySurfaceOfTheCApiShowsOnlyTheDisplayForm) {
  for (const Shape& shape : shapes()) {
    if (!shape.opens) {
      expect_no_secret(shape, refused_open(shape, shape.url), "the refused open's error");
      continue;
    }
    rl_store* raw = nullptr;
    rl_error* err = nullptr;
    ASSERT_EQ(rl_store_open(shape.url.c_str(), nullptr, &raw, &err), RL_OK)
        << shape.name << ": " << rl_error_message(err);
    rl_test::StorePtr store(raw);
    EXPECT_EQ(std::string(rl_store_display_url(store.get())), shape.display) << shape.name;

    // A call on closed ports fails as an outage; its message names hosts only.
    rl_test::LimiterPtr limiter = rl_test::make_limiter(store.get(), {{"limit", "5/s"}});
    const std::string key = "k";
    const rl_request request = rl_test::request(key, 1);
    rl_decision decision = rl_test::blank_decision();
    rl_error* call_err = nullptr;
    rl_limiter_acquire(limiter.get(), &request, &decision, &call_err);
    expect_no_secret(shape, rl_error_message(call_err), "a failed call's error");
    rl_error_free(call_err);

    std::string metrics(rl_store_format_metrics(store.get(), nullptr, 0) + 1, '\0');
    rl_store_format_metrics(store.get(), metrics.data(), metrics.size());
    expect_no_secret(shape, metrics, "the metrics");

    rl_store_close(store.get());
    EXPECT_EQ(std::string(rl_store_display_url(store.get())), shape.display) << shape.name;
    expect_no_secret(shape, refused_open(shape, shape.refused), "the refused open's error");
  }
}

TEST(UrlDisplay, DefaultPortsShow) {
  EXPECT_EQ(rl::display_url(std::string_view("redis://pw@host")), "redis://***@host:6379");
  EXPECT_EQ(rl::display_url(std::string_view("redis+sentinel://a,b:7/m")),
            "redis+sentinel://a:26379,b:7/m");
}

TEST(UrlDisplay, TextTheParserRefusesShowsNoneOfItself) {
  for (const std::string text : {"redis://u:S3cr3t@host:port", "redis://S3cr3t%zz@host",
                                 "redis://:S3cr3t@host#frag", "redis://h?S3cr3t"}) {
    EXPECT_EQ(rl::display_url(std::string_view(text)), "redis://***") << text;
  }
  for (const std::string text : {"S3cr3t@host", "://S3cr3t@host", "9x://S3cr3t@host", ""}) {
    EXPECT_EQ(rl::display_url(std::string_view(text)), "***") << text;
  }
}

TEST(UrlDisplay, PathsAndKeysShowAsWrittenOnOneLine) {
  EXPECT_EQ(rl::display_url(std::string_view("redis+sentinel://h/m%41\xc3\xa9\n/1?k%41\x01=v")),
            "redis+sentinel://h:26379/m%41%C3%A9%0A/1?k%41%01=***");
}

TEST(UrlDisplay, ValuesAreEscapedToReadBackTheSame) {
  const rl::Url url = rl::parse_store_url("redis://us%40er:pw@h?prefix=a-b&tls_ca_file=/x%20y");
  EXPECT_EQ(rl::display_url(url), "redis://us%40er:***@h:6379?prefix=a-b&tls_ca_file=/x%20y");
}

// What makes a setting's value *** is the table's `secret`: those values
// never reach a message either.
TEST(UrlDisplay, SecretSettingsAreNeverQuoted) {
  int secrets = 0;
  for (size_t i = 0; const rl::SettingInfo* info = rl::setting_at(i); ++i) {
    if (!info->secret) continue;
    ++secrets;
    const std::string value(600, 'Q');
    const std::string url = std::string("redis://h?") + info->name + "=" + value;
    EXPECT_EQ(rl::display_url(std::string_view(url)),
              std::string("redis://h:6379?") + info->name + "=***");
    rl::Settings settings;
    try {
      settings.set(info->name, value);
      ADD_FAILURE() << info->name << " took 600 bytes";
    } catch (const rl::Error& e) {
      EXPECT_EQ(std::string(e.what()).find("QQQ"), std::string::npos) << e.what();
    }
  }
  EXPECT_GE(secrets, 1);  // sentinel_password
}

TEST(UrlDisplay, ANullStoreHasNoDisplayForm) {
  EXPECT_EQ(rl_store_display_url(nullptr), nullptr);
}

}  // namespace
