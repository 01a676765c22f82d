// The table page: live state over a WebSocket, refereeing by tapping (docs/web.md).
//
// The page knows no rule. It shows what the server's referee says (its state, its one-line
// reasons, its questions) and sends the table's typed commands from its pickers, as data:
// {word: "play", cards: ["R5"]}, {word: "catch", player: "Bob"}. What a command means is the
// referee's business; a question comes with the whole command to send for each answer.
// Its own words are all in text.js (`T`); the referee's come from the server.
"use strict";

(() => {
  const T = window.UNOATTACK_TEXT;
  const $ = (id) => document.getElementById(id);
  // The page speaks the language /text.js was made in; the picker asks for another (a cookie
  // the server reads), and the page reloads in it.
  document.documentElement.lang = T.lang.replace("_", "-");
  for (const l of T.languages) {
    $("lang").append(Object.assign(document.createElement("option"), { value: l.code, textContent: l.name, selected: l.code === T.lang }));
  }
  $("lang").addEventListener("change", (ev) => {
    document.cookie = `unoattack_lang=${ev.target.value}; path=/; max-age=31536000; samesite=lax`;
    location.reload();
  });
  for (const node of document.querySelectorAll("[data-text]")) node.textContent = T[node.dataset.text];
  for (const node of document.querySelectorAll("[data-title]")) node.title = T[node.dataset.title];
  for (const node of document.querySelectorAll("[data-label]")) node.setAttribute("aria-label", T[node.dataset.label]);
  const el = (tag, attrs = {}, ...kids) => {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "class") node.className = v;
      else if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids) if (kid !== null && kid !== undefined) node.append(kid);
    return node;
  };

  const page = {
    ws: null,
    epoch: "",
    seq: 0, // the last update applied
    role: "watcher",
    table: null, // what does not change: deck cards, colours, players, box or not
    view: null, // the newest state: the referee's view, as `unoattack table --json` prints it
    box: null, // the newest box panel
    nextId: 1,
    waiting: new Map(), // request id -> resolve
    retry: 500,
    timer: null, // the reconnect waiting to happen
    hand: [], // round end: cards picked for the hand being entered
    received: [], // every update number received, in order (tests read it)
    hellos: 0, // connections made
    gaps: 0,
  };
  window.unoattack = page; // for the browser tests and the curious

  // Colour and card names in the page's language, as its rule sheet prints them; the notation
  // (R5, WAA) is what people type and stays the same in every language.
  const colourName = (c) => (c ? T.colours[c] || c : T.no_colour);
  const cardName = (card) => {
    const info = page.table && page.table.cards.find((c) => c.card === card);
    return info ? T.card_name(card, info.color, info.face) : card;
  };
  const name = (seat) => (page.view ? page.view.players[seat] : T.seat(seat));

  // -- the connection ------------------------------------------------------------------------
  function connect() {
    clearTimeout(page.timer);
    page.timer = null;
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    // The referee's words come in the page's language too (the server renders them per page).
    const query = `?lang=${T.lang}` + (page.epoch ? `&since=${page.seq}&epoch=${page.epoch}` : "");
    const ws = new WebSocket(`${proto}//${location.host}/ws${query}`);
    page.ws = ws;
    ws.onopen = () => { page.retry = 500; setConn(true); };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      receive(msg);
    };
    ws.onclose = () => {
      setConn(false);
      if (page.ws !== ws) return;
      page.ws = null;
      for (const resolve of page.waiting.values()) resolve({ ok: false, error: T.connection_lost });
      page.waiting.clear();
      page.timer = setTimeout(connect, page.retry);
      page.retry = Math.min(page.retry * 2, 5000);
    };
  }
  page.reconnect = () => { if (page.ws) page.ws.close(); };

  // A phone that slept shows the current state at once: reconnect as soon as it is visible.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible" && (!page.ws || page.ws.readyState > 1)) {
      page.retry = 500;
      if (!page.ws) connect();
    }
  });

  function setConn(on) {
    const c = $("conn");
    c.textContent = on ? T.live : T.offline;
    c.className = "conn " + (on ? "on" : "off");
  }

  function receive(msg) {
    if (msg.type === "hello") {
      page.hellos += 1;
      if (msg.epoch !== page.epoch) { page.seq = 0; page.received = []; $("messages").replaceChildren(); }
      const fresh = page.seq === 0;
      page.epoch = msg.epoch;
      page.role = msg.role;
      page.table = msg.table;
      if (fresh) for (const item of msg.recent) addMessage(item.line);
      buildPicker();
      render();
    } else if (msg.type === "update") {
      if (msg.seq <= page.seq) return;
      if (page.seq && msg.seq !== page.seq + 1) page.gaps += 1;
      page.seq = msg.seq;
      page.received.push(msg.seq);
      page.view = msg.view;
      page.box = msg.box;
      for (const line of msg.messages) addMessage(line);
      render();
    } else if (msg.type === "reset") {
      addMessage(T.missed(msg.since + 1, msg.oldest - 1), "gap");
    } else if (msg.type === "reply" || msg.type === "error") {
      const resolve = page.waiting.get(msg.id);
      page.waiting.delete(msg.id);
      if (resolve) resolve(msg.type === "error" ? { ok: false, error: msg.error } : msg);
      else if (msg.type === "error") showReply(msg.error, false);
    }
  }

  function request(type, fields) {
    return new Promise((resolve) => {
      if (!page.ws || page.ws.readyState !== 1) { resolve({ ok: false, error: T.not_connected }); return; }
      const id = page.nextId++;
      page.waiting.set(id, resolve);
      page.ws.send(JSON.stringify({ type, id, ...fields }));
    });
  }

  // -- acting ---------------------------------------------------------------------------------
  async function act(command) {
    const reply = await request("act", { command });
    if (reply.ask) { openAsk(reply); return reply; }
    showReply(reply.ok ? (reply.messages || []).join(" · ") : reply.error, reply.ok);
    return reply;
  }
  page.act = act;

  async function boxControl(op, params) {
    const reply = await request("box", params ? { op, params } : { op });
    showReply(reply.ok ? (reply.messages || []).join(" · ") || T.box_done(op) : reply.error, reply.ok);
  }

  function showReply(text, ok) {
    const r = $("reply");
    r.textContent = text || "";
    r.className = ok ? "ok" : "error";
  }

  // The referee asked for more (a wild's colour, a target, a count): its question, and the
  // answers it accepts (the referee tried each on a copy of itself).
  function openAsk(reply) {
    const dialog = $("ask");
    $("ask-question").textContent = reply.ask;
    const box = $("ask-choices");
    box.replaceChildren();
    for (const [group, words] of Object.entries(reply.choices || {})) {
      box.append(el("h3", { text: T[`group_${group}`] || group }));
      const row = el("div", { class: "group" });
      for (const word of words) {
        const cls = group === "colour" ? `card ${word}` : "";
        const label = group === "colour" ? colourName(word) : word;
        row.append(el("button", {
          type: "button", class: cls, "data-word": word, text: label,
          onclick: () => { dialog.close(); act(reply.answers[word]); },
        }));
      }
      box.append(row);
    }
    if (!dialog.open) dialog.showModal();
  }
  $("ask-cancel").addEventListener("click", () => $("ask").close());

  // -- joining ---------------------------------------------------------------------------------
  $("join-open").addEventListener("click", async () => {
    if (page.role === "player") {
      await fetch("/api/leave", { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
      page.reconnect();
      return;
    }
    $("join-error").textContent = "";
    $("join").showModal();
    $("code").focus();
  });
  $("join-cancel").addEventListener("click", () => $("join").close());
  $("join-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const res = await fetch("/api/join", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ code: $("code").value.trim() }),
    });
    let body = {};
    try { body = await res.json(); } catch { /* keep {} */ }
    if (!res.ok) { $("join-error").textContent = body.error || T.refused(res.status); return; }
    $("join").close();
    $("code").value = "";
    page.reconnect(); // the WebSocket reads the new session cookie when it opens
  });

  // -- the card picker (the active deck's cards, as the server lists them) --------------------
  function buildPicker() {
    const picker = $("picker");
    picker.replaceChildren();
    if (!page.table) return;
    const groups = new Map();
    for (const c of page.table.cards) {
      const key = c.color || "wild";
      if (!groups.has(key)) groups.set(key, []);
      groups.get(key).push(c);
    }
    for (const [key, cards] of groups) {
      const row = el("div", { class: "group", "aria-label": key === "wild" ? T.wilds : colourName(key) });
      for (const c of cards) {
        row.append(el("button", {
          type: "button",
          class: `card ${c.color || "wild"}`,
          "data-card": c.card,
          title: `${cardName(c.card)} · ${T.card_tip(c.card, c.points, c.copies)}`,
          text: c.color ? c.face : c.card,
          onclick: () => pickCard(c.card),
        }));
      }
      picker.append(row);
    }
  }

  function pickCard(card) {
    const v = page.view;
    if (!v) return;
    if (v.phase === "score") {
      page.hand.push(card);
      renderHandEntry();
      return;
    }
    const uno = $("with-uno").checked;
    $("with-uno").checked = false;
    act({ word: "play", cards: [card], uno });
  }

  function renderHandEntry() {
    const chips = $("hand-chips");
    chips.replaceChildren(...page.hand.map((card, i) => {
      const info = page.table.cards.find((c) => c.card === card);
      return el("button", {
        type: "button", class: `card ${(info && info.color) || "wild"}`, text: card, title: T.remove,
        onclick: () => { page.hand.splice(i, 1); renderHandEntry(); },
      });
    }));
  }
  const enterHand = async (force) => {
    const reply = await act({ word: "hand-left", cards: page.hand, force });
    if (reply.ok) { page.hand = []; renderHandEntry(); }
  };
  $("hand-enter").addEventListener("click", () => enterHand(false));
  $("hand-force").addEventListener("click", () => enterHand(true));
  $("hand-none").addEventListener("click", () => { page.hand = []; enterHand(false); });
  $("hand-clear").addEventListener("click", () => { page.hand = []; renderHandEntry(); });

  const selected = (id) => $(id).value;
  $("catch").addEventListener("click", () => act({ word: "catch", player: selected("who"), by: selected("by") || null }));
  $("uno-for").addEventListener("click", () => act({ word: "uno", player: selected("who") }));
  $("dealer").addEventListener("click", () => act({ word: "dealer", player: selected("who") }));
  $("set-hand").addEventListener("click", () => act({ word: "hand", player: selected("who"), count: Number($("count").value) }));
  $("load").addEventListener("click", () => act({ word: "load", count: Number($("load-n").value) }));
  for (const b of document.querySelectorAll("[data-command]")) b.addEventListener("click", () => act({ word: b.dataset.command }));
  for (const b of document.querySelectorAll("[data-box]")) b.addEventListener("click", () => boxControl(b.dataset.box));
  $("model-set").addEventListener("click", () => {
    const params = {};
    for (const input of $("model-fields").querySelectorAll("input")) {
      if (input.value === "" || input.value === input.dataset.was) continue;
      const num = Number(input.value);
      params[input.name] = Number.isFinite(num) && input.dataset.kind === "number" ? num : input.value;
    }
    if (!Object.keys(params).length) { showReply(T.change_first, false); return; }
    boxControl("model.set", params);
  });

  // -- rendering --------------------------------------------------------------------------------
  function addMessage(line, cls) {
    const list = $("messages");
    list.prepend(el("li", { class: cls, text: line }));
    while (list.children.length > 120) list.lastChild.remove();
  }

  function cardFace(card) {
    if (!card) return { cls: "empty", text: "?" };
    const info = page.table && page.table.cards.find((c) => c.card === card);
    return { cls: info && info.color ? info.color : "wild", text: card };
  }

  function render() {
    const v = page.view;
    if (!v || !page.table) return;
    document.body.dataset.phase = v.phase;
    document.body.dataset.role = page.role;
    $("round").textContent = T.round(v.round, v.phase, v.mode, v.target);
    $("deck").textContent = T.deck_rules(page.table.deck, v.rules.preset);
    $("join-open").textContent = page.role === "player" ? T.leave : T.join;
    $("join-open").hidden = Boolean(page.table.watch_only);
    $("watch-only").hidden = !page.table.watch_only;
    $("watch-only").textContent = page.table.watch_only || "";

    const top = cardFace(v.top);
    const t = $("top");
    t.className = `card big ${top.cls}`;
    t.textContent = top.text;
    t.dataset.card = v.top || "";
    $("top-name").textContent = v.top ? cardName(v.top) : "";

    const playing = v.phase === "play";
    $("colour").replaceChildren(
      ...(v.color ? [el("span", { class: `swatch card ${v.color}` })] : []),
      T.colour(colourName(v.color)),
    );
    $("colour").dataset.color = v.color || "";
    const next = v.actor !== null && v.actor !== v.turn; // someone owes hits first
    $("turn").textContent = playing ? (next ? T.plays_next : T.to_play)(name(v.turn)) : v.phase === "deal" ? T.deals_now(name(v.dealer)) : "";
    $("turn").dataset.seat = playing ? v.turn : "";
    $("direction").textContent = v.direction === 1 ? T.left : T.right;
    $("direction").dataset.direction = v.direction;
    $("prompt").textContent = v.prompt;

    $("owes").replaceChildren(...v.owes.map((line) => el("li", { text: line })));
    if (v.pending.length > 1) {
      $("owes").append(el("li", { class: "order", text: T.order(v.pending.map((o) => name(o.seat))) }));
    }

    const b = v.button;
    const bs = $("button-state");
    if (v.classic && b.box) bs.replaceChildren(T.classic_locked);
    else if (!b.box && page.table.box) bs.replaceChildren(v.hitter !== null ? T.presses_box(name(v.hitter)) : T.nobody_presses);
    else if (!b.box) bs.replaceChildren(v.hitter !== null ? T.tap_fired(name(v.hitter)) : T.no_box);
    else if (b.locked === false && b.seat !== null) bs.replaceChildren(el("span", { class: "live", text: T.live_for(name(b.seat)) }));
    else bs.replaceChildren(b.locked ? el("span", { class: "locked", text: T.locked }) : T.waiting_box);
    bs.dataset.locked = String(b.locked);

    const uno = v.uno;
    const u = $("uno");
    u.hidden = !uno;
    if (uno) u.textContent = uno.called ? T.uno_called(name(uno.seat)) : T.uno_not_called(name(uno.seat));

    renderSeats(v);
    renderScores(v);
    renderBox(v, page.box);
    renderActions(v);
  }

  function renderSeats(v) {
    const owing = new Set(v.pending.map((o) => o.seat));
    $("seats").replaceChildren(...v.players.map((player, s) => {
      const turn = v.phase === "play" && s === v.turn;
      const tags = [];
      if (s === v.dealer) tags.push(el("span", { class: "badge", text: T.badge_dealer }));
      if (owing.has(s)) tags.push(el("span", { class: "badge owes", text: T.badge_owes }));
      if (v.uno && v.uno.seat === s) tags.push(el("span", { class: "badge uno", text: v.uno.called ? T.badge_uno : T.badge_uno_missing }));
      if (!v.active[s]) tags.push(el("span", { class: "badge", text: T.badge_out }));
      return el("tr", { class: [turn ? "turn" : "", v.active[s] ? "" : "out"].join(" ").trim() || null, "data-seat": s },
        el("td", { text: turn ? "▶" : "" }),
        el("td", { class: "name" }, player, ...tags),
        el("td", { class: "num hand", text: String(v.hands[s]) }),
        el("td", { class: "num fired", text: `${v.fired[s]} (${v.presses[s]})` }),
        el("td", { class: "num score", text: String(v.scores[s]) }));
    }));
  }

  function renderScores(v) {
    const order = v.players.map((_, s) => s).sort((a, b) => v.scores[b] - v.scores[a] || a - b);
    $("scores").replaceChildren(...order.map((s) => el("tr", {},
      el("td", { text: v.players[s] + (v.game_winners.includes(s) ? T.wins : "") }),
      el("td", { class: "num", text: String(v.scores[s]) }))));
    const head = el("tr", {}, el("th", { text: T.round_col }), el("th", { text: T.to_col }),
      ...v.players.map((p) => el("th", { text: p })));
    $("rounds").replaceChildren(...(v.rounds.length ? [head] : []), ...v.rounds.map((r) => el("tr", {},
      el("td", { text: String(r.round) }), el("td", { text: name(r.winner) }),
      ...r.gained.map((g) => el("td", { class: "num", text: g ? `+${g}` : "" })))));
  }

  function renderBox(v, box) {
    // [key (the tests' data-fact), label, value]
    const facts = [];
    if (!box.connected) facts.push(["box", T.fact_box, box.lost ? T.box_lost(box.lost) : T.box_none]);
    else {
      facts.push(["state", T.fact_state, box.state || T.unknown], ["hopper", T.fact_hopper, box.hopper ?? T.unknown],
        ["dry streak", T.fact_dry, box.dry_streak ?? T.unknown], ["jams", T.fact_jams, box.jams],
        ["button", T.fact_button, box.locked ? T.button_locked : T.button_live]);
      if (box.fault) facts.push(["fault", T.fact_fault, box.fault]);
      if (v.dispensing) facts.push(["dispensing", T.fact_dispensing, T.dispensing(v.dispensing.cards, name(v.dispensing.seat))]);
    }
    $("box-facts").replaceChildren(...facts.flatMap(([k, label, val]) => [el("dt", { text: label }), el("dd", { "data-fact": k, text: String(val) })]));
    $("bursts").replaceChildren(...box.bursts.map((b) => el("li", { text: T.burst(b.press_id, b.seat, b.ejected, b.reason) })));
    const controls = $("box-controls");
    controls.hidden = !(page.role === "player" && box.connected);
    const fields = $("model-fields");
    if (box.model && fields.dataset.filled !== JSON.stringify(box.model)) {
      fields.dataset.filled = JSON.stringify(box.model);
      fields.replaceChildren(...Object.entries(box.model)
        .filter(([, val]) => typeof val === "number" || typeof val === "string")
        .map(([k, val]) => el("label", {}, k, el("input", {
          name: k, value: String(val), "data-was": String(val), "data-kind": typeof val,
          inputmode: typeof val === "number" ? "decimal" : "text",
        }))));
    }
  }

  // A button that sends `command`; `data-act` names it as the line a terminal would type.
  function button(label, command, opts = {}) {
    const named = [command.word, ...Object.entries(command).filter(([k]) => k !== "word").map(([, v]) => v === true ? "y" : v === false ? "n" : v)].join(" ");
    return el("button", { type: "button", "data-act": named, class: opts.primary ? "primary" : null, text: label, onclick: () => act(command) });
  }

  function renderActions(v) {
    const mine = page.role === "player";
    $("actions").hidden = !mine || v.phase === "over" && !v.undo;
    if (!mine) return;
    const row = $("act-buttons");
    const buttons = [];
    const phase = v.phase;
    const hitter = v.hitter;
    if (phase === "deal") buttons.push(el("span", { text: T.tap_turned_up }));
    if (phase === "play") {
      if (hitter !== null && !v.classic) {
        if (v.button.box) buttons.push(button(T.press_for(name(hitter)), { word: "press" }, { primary: true }));
        else for (let n = 0; n <= page.table.max_fired; n++) buttons.push(button(n === 0 ? T.dry : T.fired_n(n), { word: "fired", count: n }, { primary: n === 0 }));
      } else if (hitter !== null && !v.button.box) {
        for (let n = 0; n <= page.table.max_fired; n++) buttons.push(button(T.dealt_n(n), { word: "fired", count: n }));
      }
      if (!v.classic) buttons.push(button(T.hit, { word: "hit" }));
      if (v.classic) buttons.push(button(T.draw, { word: "draw" }));
      buttons.push(button(T.pass, { word: "pass" }), button(T.uno, { word: "uno" }));
      if (v.wd4) buttons.push(button(T.challenge_legal, { word: "challenge", legal: true }), button(T.challenge_not, { word: "challenge", legal: false }));
    }
    if (v.undo) buttons.push(button(T.undo, { word: "undo" }));
    row.replaceChildren(...buttons);

    const scoring = phase === "score";
    $("hand-entry").hidden = !scoring;
    if (scoring && v.to_enter.length) {
      const seat = v.to_enter[0];
      $("hand-entry-title").textContent = T.cards_left(name(seat), v.hands[seat]);
    }
    $("uno-toggle").hidden = phase !== "play";
    $("picker").hidden = !(phase === "deal" || phase === "play" || phase === "score");
    const who = $("who");
    if (who.options.length !== v.players.length) {
      who.replaceChildren(...v.players.map((p) => el("option", { value: p, text: p })));
      $("by").replaceChildren(el("option", { value: "", text: T.nobody }), ...v.players.map((p) => el("option", { value: p, text: p })));
    }
  }

  connect();
})();
