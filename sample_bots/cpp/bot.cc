// The C++ starter kit: a whole referee bot with Debian's grpc++ (1.51) and protobuf (3.21).
//
//   make                # stubs from proto/referee/v1/referee.proto, then ./bot (see the Makefile)
//   ./bot --address HOST:PORT --name NAME --token TOKEN [--capacity N]
//
// A tournament's launcher starts it with --address unix:/run/referee/referee.sock --name NAME
// --token-fd 3 --capacity N (docs/protocol.md §15). It reads the typed observation (Hello.data_form
// = DATA_TYPED: no JSON library) and plays both games by a few plain rules, the same as the other
// starter kits': enough to beat the random bot. Replace choose() with your own.
//
// An exception thrown by choose() ends the process: its seats are charged a disconnect and the
// launcher starts it again before its next match. To play on instead, catch it and answer the
// request with set_error(what()) in place of set_index: an error fault (docs/protocol.md §4).
//
// Exit codes: 0 the referee ended the session, 1 the stream broke, 2 bad usage, 3 refused.

#include <grpcpp/grpcpp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "referee/v1/referee.grpc.pb.h"

namespace pb = referee::v1;
using Legal = google::protobuf::RepeatedPtrField<std::string>;

// ---------------------------------------------------------------- cards and actions

const std::string RANKS = "23456789TJQKA";
int rank(const std::string& card) { return static_cast<int>(RANKS.find(card[0])); }  // 0 (two) .. 12 (ace)
char suit(const std::string& card) { return card[1]; }
bool is_card(const std::string& a) {
  return a.size() == 2 && RANKS.find(a[0]) != std::string::npos && std::string("SHDC").find(a[1]) != std::string::npos;
}

int find(const Legal& legal, const std::string& name) {
  auto it = std::find(legal.begin(), legal.end(), name);
  return it == legal.end() ? -1 : static_cast<int>(it - legal.begin());
}

// The index of the legal "WORD n" whose n is nearest to target (ties: the lower n), or -1.
int closest(const Legal& legal, const std::string& word, int target) {
  int best = -1, best_gap = 1 << 30;
  for (int i = 0; i < legal.size(); i++) {
    const std::string& a = legal[i];
    if (a.rfind(word + " ", 0) != 0) continue;
    int gap = std::abs(std::atoi(a.c_str() + word.size() + 1) - target);
    if (gap < best_gap) best = i, best_gap = gap;
  }
  return best;
}

// The legal card of the highest (or lowest) strength.
template <typename Strength>
int extreme_card(const Legal& legal, Strength strength, bool highest) {
  int best = -1, best_value = 0;
  for (int i = 0; i < legal.size(); i++) {
    if (!is_card(legal[i])) continue;
    int value = strength(legal[i]);
    if (best < 0 || (highest ? value > best_value : value < best_value)) best = i, best_value = value;
  }
  return best;
}

// ---------------------------------------------------------------- Confirmation (docs/protocol.md §9)

int estimate(const pb::ConfirmationObservation& obs) {  // the tricks these cards should take
  int trumps = 0, aces = 0, high = 0;
  for (const std::string& c : obs.hand()) {
    if (suit(c) == obs.trump()[0]) trumps++, high += rank(c) >= 10;
    else aces += rank(c) == 12;
  }
  return aces + high + std::max(0, trumps - 3);
}

int play_confirmation(const pb::ConfirmationObservation& obs, const Legal& legal) {
  if (obs.phase() == "bid") return closest(legal, "BID", estimate(obs));
  int won = obs.tricks_won(obs.seat()), bid = obs.bids_in_force(obs.seat());
  if (obs.phase() == "confirm") {  // keep the bid unless the cards now promise quite another count
    int expected = won + estimate(obs);
    int revise = closest(legal, "REVISE", expected);
    return std::abs(expected - bid) >= 2 && revise >= 0 ? revise : find(legal, "CONFIRM");
  }
  // trick play: the strongest card while short of the bid, else the weakest
  auto strength = [&](const std::string& c) { return rank(c) + (suit(c) == obs.trump()[0] ? 13 : 0); };
  return extreme_card(legal, strength, won < bid);
}

// ---------------------------------------------------------------- Aegis (docs/protocol.md §10)

int aegis_strength(const pb::AegisObservation& obs, const std::string& card) {
  if (suit(card) == obs.trump()[0]) return 30 + rank(card);
  if (std::find(obs.killers().begin(), obs.killers().end(), card) != obs.killers().end()) return 20;
  return rank(card) == 12 ? 9 : rank(card);  // an ace beats only faces: about a jack
}

int play_aegis(const pb::AegisObservation& obs, const Legal& legal) {
  if (obs.phase() == "exchange") {
    // discard the weak cards (below a ten, no trump, no killer); the legal names list the cards
    // in canonical order, as the hand is, so the wanted name is built in that order
    std::string wanted = "EXCHANGE";
    int weak = 0;
    for (const std::string& c : obs.hand())
      if (aegis_strength(obs, c) < 8) wanted += " " + c, weak++;
    if (obs.role() == "master")  // exchange once at most, and only a bad hand
      return obs.e() == 0 && weak >= 2 ? find(legal, wanted) : find(legal, "STOP");
    return weak ? find(legal, wanted) : 0;  // 0: the bare EXCHANGE, keeping the hand
  }
  if (obs.phase() == "declare") {
    int strong = 0, declare = closest(legal, "DECLARE", 0);  // the least declaration allowed
    for (const std::string& c : obs.hand()) strong += aegis_strength(obs, c) >= 20;
    if (obs.role() == "slave" && (strong < 3 || declare < 0) && find(legal, "PASS") >= 0) return find(legal, "PASS");
    return declare;
  }
  // trick play: the attacker plays its strongest card, the defender its weakest
  bool attacking = obs.has_attacker() && obs.attacker() == obs.seat();
  return extreme_card(legal, [&](const std::string& c) { return aegis_strength(obs, c); }, attacking);
}

// The index in request.legal_actions() to play; anything amiss falls back to 0, the referee's default.
int choose(const pb::DecisionRequest& request) {
  int choice = 0;
  if (request.has_confirmation()) choice = play_confirmation(request.confirmation(), request.legal_actions());
  else if (request.has_aegis()) choice = play_aegis(request.aegis(), request.legal_actions());
  return choice >= 0 && choice < request.legal_actions_size() ? choice : 0;
}

// ---------------------------------------------------------------- the session

[[noreturn]] void usage(const std::string& why) {
  std::cerr << why << "\nusage: bot --address HOST:PORT|unix:PATH --name NAME [--token TOKEN | --token-fd FD]"
            << " [--capacity N]\n";
  std::exit(2);
}

// The token the launcher wrote into descriptor fd: its first line, spaces stripped; fd is closed.
std::string token_from_fd(int fd) {
  std::string text;
  char c;
  ssize_t n;
  while ((n = read(fd, &c, 1)) == 1 && c != '\n') text += c;
  if (n < 0) usage("cannot read the token from --token-fd " + std::to_string(fd));
  close(fd);
  text.erase(0, text.find_first_not_of(" \t\r"));
  text.erase(text.find_last_not_of(" \t\r") + 1);
  return text;
}

int main(int argc, char** argv) {
  std::string address = "127.0.0.1:50051", name = "cpp-bot", token;
  int token_fd = -1, capacity = 1;
  for (int i = 1; i < argc; i++) {
    std::string arg = argv[i];
    if (i + 1 >= argc) usage("missing a value after " + arg);
    std::string value = argv[++i];
    if (arg == "--address") address = value;
    else if (arg == "--name") name = value;
    else if (arg == "--token") token = value;
    else if (arg == "--token-fd") token_fd = std::atoi(value.c_str());
    else if (arg == "--capacity") capacity = std::atoi(value.c_str());
    else usage("unknown argument " + arg);
  }
  if (token_fd >= 0) {
    if (!token.empty()) usage("give --token or --token-fd, not both");
    token = token_from_fd(token_fd);
  }

  auto stub = pb::Referee::NewStub(grpc::CreateChannel(address, grpc::InsecureChannelCredentials()));
  grpc::ClientContext context;
  auto stream = stub->Play(&context);  // keep it open: closing our side ends the session
  pb::BotMessage hello;
  pb::Hello* h = hello.mutable_hello();
  h->set_protocol_version(1);
  h->set_bot_name(name);
  h->set_token(token);
  h->set_capacity(capacity);
  h->set_data_form(pb::DATA_TYPED);  // the typed observation only: no JSON to parse
  stream->Write(hello);

  pb::RefereeMessage message;
  while (stream->Read(&message)) {
    switch (message.kind_case()) {
      case pb::RefereeMessage::kWelcome:
        std::cerr << name << ": session " << message.welcome().session_id() << " on " << message.welcome().server()
                  << "\n";
        break;
      case pb::RefereeMessage::kRefusal:
        std::cerr << name << ": refused (" << pb::Refusal::Reason_Name(message.refusal().reason())
                  << "): " << message.refusal().message() << "\n";
        return 3;
      case pb::RefereeMessage::kRequest: {
        const pb::DecisionRequest& request = message.request();
        pb::BotMessage reply;
        pb::ActionReply* action = reply.mutable_action();
        action->set_request_id(request.request_id());
        action->set_game_id(request.game_id());
        action->set_seat(request.seat());
        action->set_index(choose(request));
        stream->Write(reply);
        break;
      }
      case pb::RefereeMessage::kResult:  // a substitution: the referee played another action (a fault)
        std::cerr << name << ": " << message.result().game_id() << " seat " << message.result().seat()
                  << ": the referee played " << message.result().action() << ": " << message.result().reason()
                  << "\n";
        break;
      default:
        break;  // game_start, game_end: this bot needs neither
    }
  }
  grpc::Status status = stream->Finish();
  if (!status.ok()) {
    std::cerr << name << ": stream ended: " << status.error_message() << "\n";
    return 1;
  }
  return 0;
}
