// A gRPC bot in C++ for both games, written from the docs alone (docs/protocol.md §2-§7, §9, §10, §13,
// §15, docs/writing-a-bot.md "Another language", docs/rules.md and proto/referee/v1/referee.proto) by
// the `newcomer` helper, without reading the referee's source, its starter kits or its tests.
// It asks for the typed observation (Hello.data_form = DATA_TYPED), so it needs no JSON library.
// Build: make (Debian 12: g++ make pkg-config libgrpc++-dev libprotobuf-dev protobuf-compiler
// protobuf-compiler-grpc).

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "referee/v1/referee.grpc.pb.h"

namespace pb = referee::v1;

static const std::string RANKS = "23456789TJQKA";

static int rank_of(const std::string& card) { return static_cast<int>(RANKS.find(card[0])); }

// ---------------------------------------------------------------- Confirmation (rules.md §1)

static double conf_worth(const std::string& card, const pb::ConfirmationObservation& obs) {
  int length = 0;
  for (const auto& c : obs.hand()) length += c[1] == card[1];
  if (card[1] == obs.trump()[0]) return rank_of(card) >= 10 ? 1.0 : rank_of(card) >= 7 ? 0.6 : 0.4;
  if (card[0] == 'A') return length <= 5 ? 0.9 : 0.6;
  if (card[0] == 'K') return length >= 2 && length <= 5 ? 0.6 : 0.2;
  return 0.0;
}

// The legal "WORD n" action whose n is nearest the target.
static std::string nearest(const pb::DecisionRequest& r, const std::string& word, int target) {
  std::string best;
  int gap = 99;
  for (const auto& a : r.legal_actions()) {
    if (a.rfind(word + " ", 0) != 0) continue;
    int n = std::atoi(a.c_str() + word.size() + 1);
    if (std::abs(n - target) < gap) gap = std::abs(n - target), best = a;
  }
  return best.empty() ? r.legal_actions(0) : best;
}

static int strength(const std::string& card, char trump) { return rank_of(card) + (card[1] == trump ? 13 : 0); }

// Does `card`, played now, win the trick so far (rule 1.5)?
static bool conf_wins(const pb::ConfirmationObservation& obs, const std::string& card) {
  char trump = obs.trump()[0], led = obs.trick_size() ? obs.trick(0)[1] : card[1];
  auto beats = [&](const std::string& a, const std::string& b) {
    if (a[1] == b[1]) return rank_of(a) > rank_of(b);
    return a[1] == trump;
  };
  for (const auto& c : obs.trick())
    if (!beats(card, c) && (c[1] == led || c[1] == trump)) return false;
  return true;
}

static std::string decide_confirmation(const pb::DecisionRequest& r) {
  const auto& obs = r.confirmation();
  char trump = obs.trump()[0];
  if (obs.phase() == "bid") {
    double worth = 0;
    for (const auto& c : obs.hand()) worth += conf_worth(c, obs);
    return nearest(r, "BID", static_cast<int>(worth + 0.5));
  }
  int bid = obs.bids_in_force(obs.seat()), won = obs.tricks_won(obs.seat());
  if (obs.phase() == "confirm") {
    double worth = won;
    for (const auto& c : obs.hand()) worth += conf_worth(c, obs);
    if (std::abs(worth - bid) <= 0.75) return "CONFIRM";
    std::string revise = nearest(r, "REVISE", std::max(won, static_cast<int>(worth + 0.5)));
    return revise;
  }
  std::vector<std::string> legal(r.legal_actions().begin(), r.legal_actions().end());
  auto by_strength = [&](const std::string& a, const std::string& b) { return strength(a, trump) < strength(b, trump); };
  std::sort(legal.begin(), legal.end(), by_strength);
  bool want = won < bid;
  if (obs.trick_size() == 0) return want ? legal.back() : legal.front();
  std::vector<std::string> winners, losers;
  for (const auto& c : legal) (conf_wins(obs, c) ? winners : losers).push_back(c);
  if (want) return winners.empty() ? legal.front() : (obs.trick_size() == 3 ? winners.front() : winners.back());
  return losers.empty() ? legal.front() : losers.back();
}

// ---------------------------------------------------------------- Aegis (rules.md §2)

static bool is_killer(const pb::AegisObservation& obs, const std::string& card) {
  for (const auto& k : obs.killers())
    if (k == card) return true;
  return false;
}

// Inside one suit (rule 2.1): the ace beats K, Q and J and loses to T down to 2.
static bool aegis_beats(const std::string& a, const std::string& b) {
  if (a[0] == 'A') return b[0] == 'K' || b[0] == 'Q' || b[0] == 'J';
  if (b[0] == 'A') return !(a[0] == 'K' || a[0] == 'Q' || a[0] == 'J');
  return rank_of(a) > rank_of(b);
}

// Does the follower's card take the trick (rule 2.6)?
static bool follower_wins(const pb::AegisObservation& obs, const std::string& led, const std::string& card) {
  char trump = obs.trump()[0];
  if (card[1] == led[1]) return aegis_beats(card, led);
  if (led[1] != trump && card[1] == trump) return true;
  return led[1] == trump && is_killer(obs, card);
}

static double aegis_worth(const pb::AegisObservation& obs, const std::string& card) {
  if (is_killer(obs, card)) return 0.6;
  if (card[1] == obs.trump()[0]) return std::string("9TJQK").find(card[0]) != std::string::npos ? 0.9 : 0.6;
  switch (card[0]) {
    case 'K': return 0.5;
    case 'Q': return 0.4;
    case 'T': case 'J': return 0.35;
    default: return 0.1;
  }
}

static double lead_value(const pb::AegisObservation& obs, const std::string& card) {
  double rank = card[0] == 'A' ? 9.5 : rank_of(card);
  return rank + (card[1] == obs.trump()[0] ? 20 : 0);
}

static std::string decide_aegis(const pb::DecisionRequest& r) {
  const auto& obs = r.aegis();
  if (obs.phase() == "exchange") {
    std::vector<std::string> weak;
    for (const auto& c : obs.hand())
      if (aegis_worth(obs, c) < 0.3) weak.push_back(c);
    if ((obs.role() == "master" && (obs.e() >= 1 || weak.size() <= 1)) || weak.empty()) return r.legal_actions(0);
    std::string wanted = "EXCHANGE";
    for (const auto& c : weak) wanted += " " + c;  // the hand is in canonical order, as the actions are
    for (const auto& a : r.legal_actions())
      if (a == wanted) return a;
    return r.legal_actions(0);
  }
  if (obs.phase() == "declare") {
    double worth = 0;
    for (const auto& c : obs.hand()) worth += aegis_worth(obs, c);
    int estimate = static_cast<int>(worth + 0.5);
    if (obs.role() == "master") return nearest(r, "DECLARE", estimate);
    for (const auto& a : r.legal_actions())
      if (a.rfind("DECLARE ", 0) == 0 && std::atoi(a.c_str() + 8) <= estimate) return a;
    return "PASS";
  }
  std::vector<std::string> legal(r.legal_actions().begin(), r.legal_actions().end());
  std::sort(legal.begin(), legal.end(),
            [&](const std::string& a, const std::string& b) { return lead_value(obs, a) < lead_value(obs, b); });
  if (obs.trick_size() == 0) return legal.back();
  for (const auto& c : legal)
    if (follower_wins(obs, obs.trick(0).card(), c)) return c;  // the cheapest card that wins
  return legal.front();
}

// ---------------------------------------------------------------- the session (protocol.md §2, §15)

static std::string token_from_fd(int fd) {
  std::string line;
  char c;
  while (read(fd, &c, 1) == 1 && c != '\n') line += c;
  close(fd);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

int main(int argc, char** argv) {
  std::string address = "localhost:50051", name = "cppbot", token;
  int token_fd = -1, capacity = 1;
  bool have_token = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--address") address = value;
    else if (flag == "--name") name = value;
    else if (flag == "--token") token = value, have_token = true;
    else if (flag == "--token-fd") token_fd = std::atoi(value.c_str());
    else if (flag == "--capacity") capacity = std::atoi(value.c_str());
  }
  if (token_fd >= 0) {
    if (have_token) {
      std::cerr << "give --token or --token-fd, not both\n";
      return 2;
    }
    token = token_from_fd(token_fd);
  }
  auto stub = pb::Referee::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  auto stream = stub->Play(&context);
  pb::BotMessage hello;
  auto* h = hello.mutable_hello();
  h->set_protocol_version(1);
  h->set_bot_name(name);
  h->set_token(token);
  h->set_capacity(capacity);
  h->set_data_form(pb::DATA_TYPED);
  stream->Write(hello);
  pb::RefereeMessage message;
  while (stream->Read(&message)) {  // our side stays open until the referee ends the stream (§2)
    if (message.has_refusal()) {
      std::cerr << "refused: " << message.refusal().message() << "\n";
      return 2;
    }
    if (message.has_result()) std::cerr << "substituted: " << message.result().reason() << "\n";
    if (!message.has_request()) continue;
    const auto& r = message.request();
    std::string choice = r.has_aegis() ? decide_aegis(r) : decide_confirmation(r);
    pb::BotMessage reply;
    auto* a = reply.mutable_action();
    a->set_request_id(r.request_id());
    a->set_game_id(r.game_id());
    a->set_seat(r.seat());
    a->set_name(choice);
    stream->Write(reply);
  }
  grpc::Status status = stream->Finish();
  if (!status.ok()) {
    std::cerr << "stream ended: " << status.error_message() << "\n";
    return 1;
  }
  return 0;  // the referee ended the session with OK: no more games
}
