/* A referee bot in C with nothing but libc: the stdio protocol (docs/protocol.md §16).
 *
 * Each line on stdin is one message from the referee in proto3 JSON; each decision request
 * is answered by one line on stdout. A small JSON reader (below) takes the lines apart; the
 * observation is the request's object named as the game ("confirmation" or "aegis"), its keys
 * in camelCase, those at their default (0, false, "", []) left out. It plays both games by a few
 * plain rules (the same as the other starter kits'), and beats the random bot.
 *
 *   make                      # cc -O2 -std=c11 -o bot bot.c
 *   [[bots]]                  # in a tournament file
 *   name = "c-bot"
 *   command = ["./bot"]
 *   cwd = "sample_bots/stdio_c"
 *   protocol = "stdio"
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ a small JSON reader */

enum { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

typedef struct Json {
    int type;
    double num;           /* J_NUM, J_BOOL (1 or 0) */
    char *str;            /* J_STR: the text, unescaped */
    int n;                /* J_ARR, J_OBJ: how many items */
    struct Json **items;  /* J_ARR, J_OBJ: the values */
    char **keys;          /* J_OBJ: the keys */
} Json;

static const char *at;    /* where the reader is */

static void skip(void) { while (*at == ' ' || *at == '\t' || *at == '\n' || *at == '\r') at++; }

static Json *node(int type) {
    Json *j = calloc(1, sizeof *j);
    if (!j) { perror("calloc"); exit(1); }
    j->type = type;
    return j;
}

static void put_utf8(char **out, unsigned cp) {
    char *o = *out;
    if (cp < 0x80) *o++ = (char)cp;
    else if (cp < 0x800) { *o++ = (char)(0xC0 | cp >> 6); *o++ = (char)(0x80 | (cp & 0x3F)); }
    else { *o++ = (char)(0xE0 | cp >> 12); *o++ = (char)(0x80 | (cp >> 6 & 0x3F)); *o++ = (char)(0x80 | (cp & 0x3F)); }
    *out = o;
}

static char *read_string(void) {  /* at the opening quote; NULL if malformed */
    const char *start = ++at;
    while (*at && *at != '"') at += (*at == '\\' && at[1]) ? 2 : 1;
    if (*at != '"') return NULL;
    char *text = malloc((size_t)(at - start) + 1), *o = text;
    for (const char *p = start; p < at; p++) {
        if (*p != '\\') { *o++ = *p; continue; }
        switch (*++p) {
        case 'n': *o++ = '\n'; break;
        case 't': *o++ = '\t'; break;
        case 'r': *o++ = '\r'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'u': {  /* \uXXXX (a surrogate pair is written as two 3-byte sequences: enough here) */
            unsigned cp = 0;
            for (int i = 1; i <= 4 && p[i]; i++) {
                char c = p[i];
                cp = cp * 16 + (unsigned)(c <= '9' ? c - '0' : (c | 32) - 'a' + 10);
            }
            p += 4;
            put_utf8(&o, cp);
            break;
        }
        default: *o++ = *p;  /* \" \\ \/ */
        }
    }
    *o = 0;
    at++;
    return text;
}

static Json *read_value(void);

static Json *read_items(int type, char close) {  /* an array or an object, at its opening bracket */
    Json *j = node(type);
    int room = 0;
    at++;
    skip();
    if (*at == close) { at++; return j; }
    for (;;) {
        if (j->n == room) {
            room = room ? 2 * room : 8;
            j->items = realloc(j->items, (size_t)room * sizeof *j->items);
            if (type == J_OBJ) j->keys = realloc(j->keys, (size_t)room * sizeof *j->keys);
        }
        skip();
        if (type == J_OBJ) {
            if (*at != '"') return NULL;
            j->keys[j->n] = read_string();
            skip();
            if (!j->keys[j->n] || *at++ != ':') return NULL;
        }
        if (!(j->items[j->n++] = read_value())) return NULL;
        skip();
        if (*at == ',') { at++; continue; }
        if (*at++ == close) return j;
        return NULL;
    }
}

static Json *read_value(void) {
    skip();
    if (*at == '{') return read_items(J_OBJ, '}');
    if (*at == '[') return read_items(J_ARR, ']');
    if (*at == '"') { Json *j = node(J_STR); return (j->str = read_string()) ? j : NULL; }
    if (!strncmp(at, "true", 4) || !strncmp(at, "false", 5)) {
        Json *j = node(J_BOOL);
        j->num = *at == 't';
        at += *at == 't' ? 4 : 5;
        return j;
    }
    if (!strncmp(at, "null", 4)) { at += 4; return node(J_NULL); }
    char *end;
    double value = strtod(at, &end);
    if (end == at) return NULL;
    at = end;
    Json *j = node(J_NUM);
    j->num = value;
    return j;
}

/* The JSON value of a text, or NULL (a leak on malformed input: the referee sends none). */
static Json *parse(const char *text) { at = text; return read_value(); }

static void release(Json *j) {
    if (!j) return;
    for (int i = 0; i < j->n; i++) {
        release(j->items[i]);
        if (j->keys) free(j->keys[i]);
    }
    free(j->items);
    free(j->keys);
    free(j->str);
    free(j);
}

/* A member of an object, or NULL. proto3 JSON leaves out fields at their default (0, "", []). */
static Json *get(const Json *j, const char *key) {
    if (!j || j->type != J_OBJ) return NULL;
    for (int i = 0; i < j->n; i++) if (!strcmp(j->keys[i], key)) return j->items[i];
    return NULL;
}

static int num(const Json *j, const char *key) { Json *v = get(j, key); return v ? (int)v->num : 0; }
static const char *str(const Json *j, const char *key) { Json *v = get(j, key); return v && v->str ? v->str : ""; }
static int item_num(const Json *j, const char *key, int i) {
    Json *v = get(j, key);
    return v && v->type == J_ARR && i < v->n && v->items[i]->type == J_NUM ? (int)v->items[i]->num : 0;
}

/* ------------------------------------------------------------------ cards and actions */

static const char *RANKS = "23456789TJQKA";
static int rank(const char *card) { return (int)(strchr(RANKS, card[0]) - RANKS); }
static int is_card(const char *a) { return strlen(a) == 2 && strchr(RANKS, a[0]) && strchr("SHDC", a[1]); }

typedef struct { const char **names; int n; } Legal;

static int find(Legal legal, const char *name) {
    for (int i = 0; i < legal.n; i++) if (!strcmp(legal.names[i], name)) return i;
    return -1;
}

/* The index of the legal "WORD n" whose n is nearest to target (ties: the lower n), or -1. */
static int closest(Legal legal, const char *word, int target) {
    int best = -1, best_gap = 1 << 30;
    size_t len = strlen(word);
    for (int i = 0; i < legal.n; i++) {
        if (strncmp(legal.names[i], word, len) || legal.names[i][len] != ' ') continue;
        int gap = abs(atoi(legal.names[i] + len + 1) - target);
        if (gap < best_gap) { best = i; best_gap = gap; }
    }
    return best;
}

/* The legal card with the lowest (want_high 0) or highest strength. */
static int extreme_card(Legal legal, int (*strength)(const char *, const Json *), const Json *obs, int want_high) {
    int best = -1, best_value = 0;
    for (int i = 0; i < legal.n; i++) {
        if (!is_card(legal.names[i])) continue;
        int value = strength(legal.names[i], obs);
        if (best < 0 || (want_high ? value > best_value : value < best_value)) { best = i; best_value = value; }
    }
    return best;
}

/* ------------------------------------------------------------------ Confirmation */

static int estimate(const Json *hand, char trump) {  /* the tricks these cards should take */
    int trumps = 0, aces = 0, high = 0;
    for (int i = 0; hand && i < hand->n; i++) {
        const char *c = hand->items[i]->str;
        if (c[1] == trump) { trumps++; high += rank(c) >= 10; }
        else aces += rank(c) == 12;
    }
    return aces + high + (trumps > 3 ? trumps - 3 : 0);
}

static int confirmation_strength(const char *card, const Json *obs) {
    return rank(card) + (card[1] == str(obs, "trump")[0] ? 13 : 0);
}

static int play_confirmation(const Json *obs, Legal legal) {
    int me = num(obs, "seat");
    const char *phase = str(obs, "phase");
    int expected = estimate(get(obs, "hand"), str(obs, "trump")[0]);
    if (!strcmp(phase, "bid")) return closest(legal, "BID", expected);
    int won = item_num(obs, "tricksWon", me), bid = item_num(obs, "bidsInForce", me);
    if (!strcmp(phase, "confirm")) {  /* keep the bid unless the cards now promise quite another count */
        if (abs(won + expected - bid) >= 2 && closest(legal, "REVISE", won + expected) >= 0)
            return closest(legal, "REVISE", won + expected);
        return find(legal, "CONFIRM");
    }
    /* trick play: the strongest card while short of the bid, else the weakest */
    return extreme_card(legal, confirmation_strength, obs, won < bid);
}

/* ------------------------------------------------------------------ Aegis */

static int aegis_strength(const char *card, const Json *obs) {
    if (card[1] == str(obs, "trump")[0]) return 30 + rank(card);
    Json *killers = get(obs, "killers");
    for (int i = 0; killers && i < killers->n; i++) if (!strcmp(killers->items[i]->str, card)) return 20;
    return rank(card) == 12 ? 9 : rank(card);  /* an ace beats only faces: about a jack */
}

static int play_aegis(const Json *obs, Legal legal) {
    const char *phase = str(obs, "phase"), *role = str(obs, "role");
    Json *hand = get(obs, "hand");
    if (!strcmp(phase, "exchange")) {
        /* discard the weak cards (below a ten, no trump, no killer): the legal names list the
         * cards in canonical order, as the hand is, so the wanted name is built in that order */
        char wanted[64] = "EXCHANGE";
        int weak = 0;
        for (int i = 0; hand && i < hand->n; i++) {
            if (aegis_strength(hand->items[i]->str, obs) < 8) {
                strcat(wanted, " ");
                strcat(wanted, hand->items[i]->str);
                weak++;
            }
        }
        if (!strcmp(role, "master"))  /* exchange once at most, and only a bad hand */
            return num(obs, "e") == 0 && weak >= 2 ? find(legal, wanted) : find(legal, "STOP");
        return weak ? find(legal, wanted) : 0;  /* 0: the bare EXCHANGE, keeping the hand */
    }
    if (!strcmp(phase, "declare")) {
        int strong = 0, declare = closest(legal, "DECLARE", 0);  /* the least declaration allowed */
        for (int i = 0; hand && i < hand->n; i++) strong += aegis_strength(hand->items[i]->str, obs) >= 20;
        if (!strcmp(role, "slave") && (strong < 3 || declare < 0) && find(legal, "PASS") >= 0)
            return find(legal, "PASS");
        return declare;
    }
    /* trick play: the attacker plays its strongest card, the defender its weakest */
    Json *attacker = get(obs, "attacker");
    int attacking = attacker && attacker->type == J_NUM && (int)attacker->num == num(obs, "seat");
    return extreme_card(legal, aegis_strength, obs, attacking);
}

/* ------------------------------------------------------------------ the loop */

static void print_escaped(const char *s) {  /* a JSON string */
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\') printf("\\%c", *s);
        else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
        else putchar(*s);
    }
    putchar('"');
}

static int decide(const Json *request) {
    Json *names = get(request, "legalActions");
    if (!names || names->type != J_ARR || names->n == 0) return 0;
    Legal legal = { malloc((size_t)names->n * sizeof(char *)), names->n };
    for (int i = 0; i < names->n; i++) legal.names[i] = names->items[i]->str;
    Json *confirmation = get(request, "confirmation"), *aegis = get(request, "aegis");
    int choice = confirmation ? play_confirmation(confirmation, legal) : aegis ? play_aegis(aegis, legal) : 0;
    free(legal.names);
    return choice >= 0 ? choice : 0;  /* whatever happens, a legal action */
}

int main(void) {
    char *line = NULL;
    size_t size = 0;
    while (getline(&line, &size, stdin) > 0) {
        Json *message = parse(line);
        Json *request = get(message, "request"), *end = get(message, "gameEnd"), *refusal = get(message, "refusal");
        if (request) {
            /* copy requestId (a string: 64 bits), gameId and seat (left out when 0) */
            printf("{\"action\":{\"requestId\":");
            print_escaped(str(request, "requestId"));
            printf(",\"gameId\":");
            print_escaped(str(request, "gameId"));
            printf(",\"seat\":%d,\"index\":%d}}\n", num(request, "seat"), decide(request));
            fflush(stdout);
        } else if (end) {
            fprintf(stderr, "%s seat %d: over\n", str(end, "gameId"), num(end, "seat"));
        } else if (refusal) {
            fprintf(stderr, "refused (%s): %s\n", str(refusal, "reason"), str(refusal, "message"));
            return 3;
        }
        release(message);
    }
    free(line);
    return 0;
}
