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
  const store = {
    get: (k) => { try { return localStorage.getItem(k); } catch { return null; } },
    set: (k, v) => { try { localStorage.setItem(k, v); } catch { /* private mode */ } },
  };

  // -- language and theme ------------------------------------------------------------------
  // The page speaks the language /text.js was made in; the picker asks for another: the page
  // is opened again with `?lang=` (the server remembers it in a cookie).
  document.documentElement.lang = T.lang.replace("_", "-");
  for (const l of T.languages) {
    $("lang").append(Object.assign(document.createElement("option"), { value: l.code, textContent: l.name, selected: l.code === T.lang }));
  }
  $("lang").addEventListener("change", (ev) => {
    location.assign(`${location.pathname}?lang=${encodeURIComponent(ev.target.value)}`);
  });
  for (const node of document.querySelectorAll("[data-text]")) node.textContent = T[node.dataset.text];
  for (const node of document.querySelectorAll("[data-title]")) node.title = T[node.dataset.title];
  for (const node of document.querySelectorAll("[data-label]")) node.setAttribute("aria-label", T[node.dataset.label]);

  // Light or dark: the system's choice unless the toggle says otherwise (auto → dark → light).
  const THEMES = ["auto", "dark", "light"];
  function applyTheme(theme) {
    if (theme === "auto") delete document.documentElement.dataset.theme;
    else document.documentElement.dataset.theme = theme;
    $("theme").title = T.theme_is(T[`theme_${theme}`]);
    $("theme").setAttribute("aria-label", $("theme").title);
  }
  let theme = THEMES.includes(store.get("unoattack_theme")) ? store.get("unoattack_theme") : "auto";
  applyTheme(theme);
  $("theme").addEventListener("click", () => {
    theme = THEMES[(THEMES.indexOf(theme) + 1) % THEMES.length];
    store.set("unoattack_theme", theme);
    applyTheme(theme);
  });

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
    logged: 0, // the last update whose log lines are shown (hello's `recent` covers up to it)
    role: "watcher",
    me: null, // the seat this phone claimed ("I am Bo"), or null
    claims: [], // seats some phone has claimed
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
    lastBurst: null, // the newest box burst shown as a toast
    alerted: "", // what this phone's player had to do at the last render ("", "turn", "press")
    alerts: 0, // alerts given (tests read it)
    askStatus: false, // Reconnect was tapped: ask the box's status once connected
  };
  window.unoattack = page; // for the browser tests and the curious

  // Colour and card names in the page's language, as its rule sheet prints them; the notation
  // (R5, WAA) is what people type and stays the same in every language.
  const colourName = (c) => (c ? T.colours[c] || c : T.no_colour);
  const cardInfo = (card) => page.table && page.table.cards.find((c) => c.card === card);
  const cardName = (card) => {
    const info = cardInfo(card);
    return info ? T.card_name(card, info.color, info.face) : card;
  };
  const name = (seat) => (page.view ? page.view.players[seat] : T.seat(seat));
  // Each colour's own mark beside its letter: never colour alone.
  const MARKS = { R: "●", Y: "▲", G: "■", B: "◆" };

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
  page.reconnect = () => { if (page.ws) page.ws.close(); else connect(); };

  // A phone that slept shows the current state at once: reconnect as soon as it is visible.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") {
      if (!page.ws || page.ws.readyState > 1) {
        page.retry = 500;
        if (!page.ws) connect();
      }
      keepAwake();
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
      if (msg.epoch !== page.epoch) {
        page.seq = 0; page.logged = 0; page.received = [];
        $("messages").replaceChildren(); $("console").replaceChildren();
      }
      page.epoch = msg.epoch;
      page.role = msg.role;
      page.me = msg.seat ?? null;
      page.table = msg.table;
      page.share = msg.share || null;
      // A new page starts its log with the lines said so far; the update that follows (the
      // newest, which the hello's lines already tell) then brings the state only. A page that
      // reconnects gets every update it missed instead, each with its lines.
      if (page.logged === 0 && page.seq === 0) {
        for (const item of msg.recent) addMessage(item.line);
        for (const item of msg.console || []) addConsole(item.line);
        page.logged = Math.max(msg.seq, ...msg.recent.map((i) => i.seq), ...(msg.console || []).map((i) => i.seq));
      }
      buildPicker();
      renderShare();
      render();
      if (page.askStatus) { page.askStatus = false; boxControl("status"); }
    } else if (msg.type === "update") {
      if (msg.seq <= page.seq) return;
      if (page.seq && msg.seq !== page.seq + 1) page.gaps += 1;
      const live = page.seq !== 0; // not the state a page opens with
      page.seq = msg.seq;
      page.received.push(msg.seq);
      page.view = msg.view;
      page.box = msg.box;
      page.claims = msg.claims || [];
      if (msg.seq > page.logged) {
        for (const line of msg.messages) addMessage(line);
        for (const line of msg.console || []) addConsole(line);
        page.logged = msg.seq;
        if (live) boxResult(msg);
      }
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

  // -- toasts: the answer to a tap and the box's result, at the bottom, next to the thumb ------
  const toastTimers = new Map();
  function toast(node, text, cls, ms) {
    node.textContent = text || "";
    node.className = `${cls} show`;
    clearTimeout(toastTimers.get(node));
    toastTimers.set(node, setTimeout(() => node.classList.remove("show"), ms));
  }
  function showReply(text, ok) {
    toast($("reply"), text, ok ? "ok" : "error", ok ? 4000 : 7000);
  }
  // A fire the box reported for a player (the box panel's newest burst): "Cy: 3 cards!".
  function boxResult(msg) {
    const burst = msg.box && msg.box.bursts[0];
    if (!burst || !msg.cause || msg.cause.kind !== "fire" || burst.press_id === page.lastBurst) return;
    page.lastBurst = burst.press_id;
    const n = burst.ejected || 0;
    const text = burst.seat ? (n ? T.toast_fired(burst.seat, n) : T.toast_dry(burst.seat)) : T.toast_fired_nobody(n);
    toast($("box-result"), text, n ? "fired" : "dry", 4000);
  }

  // -- acting ---------------------------------------------------------------------------------
  async function act(command) {
    const reply = await request("act", { command });
    if (reply.ask) { openAsk(reply); return reply; }
    // (a press says nothing at once: its answer is the box's result, a toast of its own)
    if (!reply.ok || (reply.messages || []).length) showReply(reply.ok ? reply.messages.join(" · ") : reply.error, reply.ok);
    return reply;
  }
  page.act = act;

  async function boxControl(op, params) {
    const reply = await request("box", params ? { op, params } : { op });
    showReply(reply.ok ? (reply.messages || []).join(" · ") || T.box_done(op) : reply.error, reply.ok);
    return reply;
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
        const colour = group === "colour";
        row.append(el("button", {
          type: "button", class: colour ? `card ${word}` : "", "data-word": word, "data-mark": colour ? MARKS[word] : null,
          text: colour ? `${colourName(word)} (${word})` : word,
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

  // -- "I am Bo": this phone's seat, its alerts ------------------------------------------------
  $("claim").addEventListener("change", async (ev) => {
    const seat = ev.target.value === "" ? null : Number(ev.target.value);
    const reply = await request("claim", { seat });
    if (!reply.ok) { showReply(reply.error, false); ev.target.value = page.me ?? ""; return; }
    page.me = reply.seat ?? null;
    page.alerted = "";
    render();
  });
  let audio = null; // made on the tap that turns alerts on (browsers allow sound after a tap)
  $("alerts").checked = store.get("unoattack_alerts") === "on";
  $("alerts").addEventListener("change", (ev) => {
    store.set("unoattack_alerts", ev.target.checked ? "on" : "off");
    if (ev.target.checked) alert_(true);
  });
  function alert_(test) {
    page.alerts += 1;
    if (navigator.vibrate) navigator.vibrate(test ? 80 : [200, 100, 200]);
    try {
      audio = audio || new (window.AudioContext || window.webkitAudioContext)();
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = 880;
      gain.gain.setValueAtTime(0.15, audio.currentTime);
      gain.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.25);
      osc.connect(gain).connect(audio.destination);
      osc.start();
      osc.stop(audio.currentTime + 0.25);
    } catch { /* no sound here: the vibration and the highlight remain */ }
  }
  // What this phone's player must do now: "" (nothing), "turn" or "press".
  function myDuty(v) {
    const me = page.me;
    if (me === null || !v || v.phase !== "play") return "";
    if (v.hitter === me) return "press";
    if (v.hitter === null && v.turn === me) return "turn";
    return "";
  }

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
      const label = key === "wild" ? T.wilds : `${MARKS[key]} ${colourName(key)} (${key})`;
      const row = el("div", { class: "group", "aria-label": label }, el("div", { class: "group-name", text: label }));
      for (const c of cards) {
        row.append(el("button", {
          type: "button",
          class: `card ${c.color || "wild"}`,
          "data-card": c.card,
          title: `${cardName(c.card)} · ${T.card_tip(c.card, c.points, c.copies)}`,
          "aria-label": cardName(c.card),
          text: c.card, // the letter of its colour with the face: never colour alone
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
      const info = cardInfo(card);
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
  $("test-fire").addEventListener("click", () => boxControl("fire"));
  $("box-reconnect").addEventListener("click", () => {
    page.askStatus = true; // once connected again (its hello), the box's status afresh
    page.reconnect();
  });
  $("new-game").addEventListener("click", () => {
    if (!confirm(T.new_game_confirm)) return;
    request("new", {}).then((reply) => showReply(reply.ok ? reply.messages.join(" · ") : reply.error, reply.ok));
  });

  // -- sharing: the page's address as a link and a QR code, for the next player ------------
  function renderShare() {
    const share = page.share;
    const url = share && share.url;
    $("share-url").textContent = url || "";
    $("share-help").textContent = url ? T.share_help : T.share_local;
    $("qr").hidden = !url;
    if (url && !$("qr").getAttribute("src")) { $("qr").src = "/api/qr.svg"; $("qr").alt = url; }
    $("share-button").hidden = !url;
  }
  $("share-button").addEventListener("click", async () => {
    const url = page.share && page.share.url;
    if (!url) return;
    try {
      if (navigator.share) { await navigator.share({ title: T.page_title, url }); return; }
      await navigator.clipboard.writeText(url);
      showReply(T.link_copied, true);
    } catch { /* the person closed the share sheet */ }
  });

  // -- keep the screen on while a game runs (where the browser offers it) ---------------------
  let wakeLock = null;
  async function keepAwake() {
    const running = page.view && page.view.phase !== "over";
    if (!running || document.visibilityState !== "visible" || !("wakeLock" in navigator)) {
      if (!running && wakeLock) { wakeLock.release().catch(() => {}); wakeLock = null; }
      return;
    }
    if (wakeLock && !wakeLock.released) return;
    try { wakeLock = await navigator.wakeLock.request("screen"); } catch { wakeLock = null; }
  }
  page.wakeLock = () => wakeLock;

  // -- rendering --------------------------------------------------------------------------------
  function addMessage(line, cls) {
    const list = $("messages");
    list.prepend(el("li", { class: cls, text: line }));
    while (list.children.length > 120) list.lastChild.remove();
  }
  function addConsole(line) {
    const list = $("console");
    list.prepend(el("li", { text: line }));
    while (list.children.length > 200) list.lastChild.remove();
  }

  function cardFace(card) {
    if (!card) return { cls: "empty", text: "?", mark: null };
    const info = cardInfo(card);
    const color = info && info.color;
    return { cls: color || "wild", text: card, mark: color ? MARKS[color] : null };
  }

  // What happens next, in words (the referee's state read; never its prompt's syntax).
  function instruction(v) {
    const b = v.button;
    if (v.phase === "deal") return T.ins_deal(name(v.dealer));
    if (v.phase === "score") {
      const seat = v.to_enter[0];
      return seat === undefined ? "" : T.ins_score(name(seat), v.hands[seat]);
    }
    if (v.phase === "over") {
      // A mode may name winners, losers or both (knockout, chips, losing, teams name a loser).
      const said = [];
      if (v.game_winners.length) said.push(T.ins_over(v.game_winners.map(name).join(", ")));
      if ((v.game_losers || []).length) said.push(T.ins_over_lost(v.game_losers.map(name).join(", ")));
      return said.length ? said.join(" ") : T.game_over;
    }
    const hitter = v.hitter;
    if (v.wd4) return T.ins_challenge(name(hitter ?? v.turn));
    if (hitter !== null) {
      const who = name(hitter);
      if (v.classic) return b.box ? T.ins_dispense(who) : T.ins_dealt(who);
      if (!b.box) return T.ins_tap_fired(who);
      return b.locked === false && b.seat !== null ? T.ins_press(who) : T.ins_wait_box(who);
    }
    const who = name(v.turn);
    if (v.bonus) return T.ins_bonus(who);
    if (v.may_play_taken) return T.ins_play_taken(who);
    return T.ins_play(who, v.top ? `${v.top} (${cardName(v.top)})` : "?");
  }

  function render() {
    const v = page.view;
    if (!v || !page.table) return;
    document.body.dataset.phase = v.phase;
    document.body.dataset.role = page.role;
    const mode = T[`mode_${v.mode}`];
    const span = v.night ? T.mode_night(v.mode, v.night.game_rounds[0], v.night.game_rounds[1]) : null;
    $("round").textContent = T.round(v.round, T[`phase_${v.phase}`] || v.phase, span || (mode ? mode(v.target) : `${v.mode} ${v.target}`));
    $("deck").textContent = T.deck_rules(page.table.deck, v.rules.preset);
    $("join-open").textContent = page.role === "player" ? T.leave : T.join;
    $("join-open").hidden = Boolean(page.table.watch_only);
    $("watch-only").hidden = !page.table.watch_only;
    $("watch-only").textContent = page.table.watch_only || "";

    // The strip: the top card (its letter and mark, not colour alone), colour, direction, turn.
    const top = cardFace(v.top);
    const t = $("top");
    t.className = `card mini ${top.cls}`;
    t.textContent = top.text;
    t.dataset.card = v.top || "";
    if (top.mark) t.dataset.mark = top.mark; else delete t.dataset.mark;
    $("top-name").textContent = v.top ? cardName(v.top) : "";
    const playing = v.phase === "play";
    // the colour in words and by its letter; none yet (before the deal): nothing to say
    $("colour").replaceChildren(...(v.color ? [
      el("span", { class: `swatch card ${v.color}` }),
      T.colour(`${colourName(v.color)} (${v.color})`) + " ·",
    ] : []));
    $("colour").dataset.color = v.color || "";
    const next = v.actor !== null && v.actor !== v.turn; // someone owes hits first
    $("turn").textContent = playing ? (next ? T.plays_next : T.to_play)(name(v.turn)) : v.phase === "deal" ? T.deals_now(name(v.dealer)) : "";
    $("turn").dataset.seat = playing ? v.turn : "";
    $("direction").textContent = v.direction === 1 ? T.clockwise : T.counter_clockwise;
    $("direction").dataset.direction = v.direction;
    $("instruction").textContent = instruction(v);

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

    renderMe(v);
    renderSeats(v);
    renderScores(v);
    renderNight(v);
    renderBox(v, page.box);
    renderActions(v);
    keepAwake();
  }

  // This phone's seat: its line in the strip, its highlight, its alert when it must act.
  function renderMe(v) {
    const mine = page.role === "player";
    $("me").hidden = !mine || Boolean(page.table.watch_only);
    const claim = $("claim");
    const options = [["", T.nobody_claimed], ...v.players.map((p, s) => [String(s), p])];
    if (claim.options.length !== options.length) {
      claim.replaceChildren(...options.map(([value, text]) => el("option", { value, text })));
    }
    for (const option of claim.options) {
      const s = option.value === "" ? null : Number(option.value);
      option.disabled = s !== null && s !== page.me && page.claims.includes(s);
    }
    claim.value = page.me === null ? "" : String(page.me);
    const me = page.me;
    const duty = myDuty(v);
    document.body.classList.toggle("my-turn", duty !== "");
    const strip = $("me-strip");
    strip.hidden = me === null;
    if (me !== null) {
      const tally = T.me_tally(name(me), v.hands[me], v.fired[me], v.presses[me], v.scores[me]);
      strip.textContent = duty === "press" ? `${T.me_press} · ${tally}` : duty === "turn" ? `${T.me_turn} · ${tally}` : tally;
    }
    // Alert when this player comes to act (their turn, or presses they owe), once each time.
    if (duty && duty !== page.alerted && $("alerts").checked) alert_(false);
    page.alerted = duty;
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
      if (page.claims.includes(s)) tags.push(el("span", { class: "badge phone", text: s === page.me ? T.badge_me : T.badge_phone }));
      const cls = [turn ? "turn" : "", v.active[s] ? "" : "out", s === page.me ? "mine" : ""].join(" ").trim();
      return el("tr", { class: cls || null, "data-seat": s },
        el("td", { text: turn ? "▶" : "" }),
        el("td", { class: "name" }, player, ...tags),
        el("td", { class: "num hand", text: String(v.hands[s]) }),
        el("td", { class: "num fired", text: `${v.fired[s]} (${v.presses[s]})` }),
        el("td", { class: "num score", text: String(shownScore(v)[s]) }));
    }));
  }

  // The scores as the mode keeps them: chips mode shows the chip ledger (the chips each holds).
  function shownScore(v) {
    return v.chips || v.scores;
  }

  // Best first: the most points (target) or chips, or the fewest where points count against.
  function scoreOrder(v) {
    const score = shownScore(v);
    const low = ["lowest", "elimination", "teams", "losing"].includes(v.mode);
    return v.players.map((_, s) => s).sort((a, b) => (low ? score[a] - score[b] : score[b] - score[a]) || a - b);
  }

  function renderScores(v) {
    const order = scoreOrder(v);
    const score = shownScore(v);
    const lost = v.game_losers || [];
    $("scores").replaceChildren(...order.map((s) => el("tr", {},
      el("td", { text: v.players[s] + (v.game_winners.includes(s) ? T.wins : "") + (lost.includes(s) ? T.loses : "") }),
      el("td", { class: "num", text: v.mode === "knockout" ? "" : String(score[s]) }))));
    const head = el("tr", {}, el("th", { text: T.round_col }), el("th", { text: T.to_col }),
      ...v.players.map((p) => el("th", { text: p })));
    $("rounds").replaceChildren(...(v.rounds.length ? [head] : []), ...v.rounds.map((r) => el("tr", {},
      el("td", { text: String(r.round) }), el("td", { text: name(r.winner) }),
      ...r.gained.map((g) => el("td", { class: "num", text: g > 0 ? `+${g}` : g ? String(g) : "" })))));
    $("csv").hidden = !v.rounds.length;
    // At a night's table the next game is the rotation's next seating, once these rounds end.
    $("new-game").hidden = page.role !== "player" || Boolean(page.table.watch_only) || (v.night !== null && v.phase !== "over");
    $("new-game").textContent = v.night ? T.next_seating : T.new_game;
    $("new-game").classList.toggle("primary", v.phase === "over");
    const chips = v.night_chips;
    $("night-chips").hidden = !chips;
    if (chips) {
      const totals = Object.entries(chips).sort((a, b) => b[1] - a[1]).map(([p, n]) => `${p} ${n > 0 ? "+" : ""}${n}`);
      $("night-chips").textContent = T.chips_over(totals.join(", "));
    }
  }

  // A game night: this table, where every table is, and the standings over them all.
  function renderNight(v) {
    const n = v.night;
    $("night-section").hidden = !n;
    if (!n) return;
    $("night-title").textContent = T.night_title(n.table, n.tables.length);
    $("night-next").hidden = !n.next;
    const away = n.next ? Object.entries(n.next.elsewhere).map(([p, t]) => T.night_elsewhere(p, t)) : [];
    $("night-next").textContent = n.next ? [T.night_next(n.next.rounds[0], n.next.rounds[1], n.next.players.join(", ")), ...away].join(" · ") : "";
    $("night-tables").replaceChildren(...n.tables.map((t) => el("li", { text: T.night_table(t.table, t.next_round, t.players.join(" ")) })));
    const s = n.standings;
    const head = el("tr", {}, el("th", { text: T.standings_place }), el("th", { text: T.players }),
      el("th", { text: T.standings_total }), el("th", { text: T.standings_rounds }));
    $("standings").replaceChildren(head, ...s.ranking.map((r) => el("tr", {},
      el("td", { class: "num", text: String(r.place) }), el("td", { text: r.name }),
      el("td", { class: "num", text: String(r.total) }), el("td", { class: "num", text: String(s.played[r.name]) }))));
    const even = new Set(Object.values(s.played)).size === 1;
    const champions = s.champions.join(" & ");
    $("night-champion").textContent = !champions ? "" : even ? T.night_champion(champions) : T.night_leading(champions);
  }

  const minutes = (ms) => T.uptime(Math.floor(ms / 3600000), Math.floor(ms / 60000) % 60);

  function renderBox(v, box) {
    // [key (the tests' data-fact), label, value]
    const facts = [];
    const link = $("link");
    if (!page.table.box) {
      facts.push(["box", T.fact_box, T.box_none]);
      link.textContent = "";
      link.hidden = true;
    } else {
      link.hidden = false;
      const state = box.link || (box.connected ? "connected" : "lost");
      link.textContent = T[`link_${state}`] || state;
      link.className = `chip ${state === "connected" ? "on" : "off"}`;
      link.dataset.link = state;
    }
    if (!box.connected && page.table.box) facts.push(["box", T.fact_box, box.lost ? T.box_lost(box.lost) : T.unknown]);
    if (box.connected) {
      facts.push(["state", T.fact_state, box.state ? T.box_state(box.state) : T.unknown],
        ["hopper", T.fact_hopper, box.hopper ?? T.unknown],
        ["dry streak", T.fact_dry, box.dry_streak ?? T.unknown], ["jams", T.fact_jams, box.jams],
        ["button", T.fact_button, box.locked ? T.button_locked : T.button_live]);
      if (box.fault) facts.push(["fault", T.fact_fault, box.fault]);
      if (v.dispensing) facts.push(["dispensing", T.fact_dispensing, T.dispensing(v.dispensing.cards, name(v.dispensing.seat))]);
      if (box.name) facts.push(["name", T.fact_name, box.name]);
      if (box.version) facts.push(["firmware", T.fact_firmware, box.version]);
      if (box.uptime_ms !== null && box.uptime_ms !== undefined) facts.push(["uptime", T.fact_uptime, minutes(box.uptime_ms)]);
    }
    $("box-facts").replaceChildren(...facts.flatMap(([k, label, val]) => [el("dt", { text: label }), el("dd", { "data-fact": k, text: String(val) })]));

    // The hopper as a gauge: of the most it held since it was last loaded.
    const gauge = $("hopper-gauge");
    const hasHopper = box.connected && typeof box.hopper === "number";
    $("hopper").hidden = !hasHopper;
    if (hasHopper) {
      const full = Math.max(box.hopper_full || 0, box.hopper, 1);
      gauge.max = full;
      gauge.low = Math.min(box.low_cards, full);
      gauge.optimum = full;
      gauge.value = box.hopper;
      gauge.title = T.hopper_of(box.hopper, full);
      const low = box.hopper <= box.low_cards;
      $("hopper-low").hidden = !low;
      $("hopper-low").textContent = low ? T.hopper_low(box.hopper) : "";
    }
    $("bursts").replaceChildren(...box.bursts.map((b) => el("li", { text: T.burst(b.press_id, b.seat, b.ejected, b.reason) })));

    const dash = $("dashboard");
    dash.hidden = !(page.role === "player" && page.table.box && !page.table.watch_only);
    if (dash.hidden) return;
    $("jams").replaceChildren(...(box.jam_log.length
      ? box.jam_log.map((j) => el("li", { text: T.jam_entry(j.press_id, j.retries, minutes(j.t_ms || 0)) }))
      : [el("li", { text: T.no_jams })]));
    // The box's own switches (its `settings.set`: within what its config allows).
    const switches = $("switches");
    const settings = box.settings || {};
    const keys = box.switches.filter((k) => k in settings);
    if (switches.dataset.keys !== keys.join()) {
      switches.dataset.keys = keys.join();
      switches.replaceChildren(...keys.map((k) => el("label", { class: "check" },
        el("input", { type: "checkbox", "data-setting": k, onchange: (ev) => boxControl("settings.set", { [k]: ev.target.checked }) }),
        T[`switch_${k.split(".")[0]}`] || k)));
    }
    for (const input of switches.querySelectorAll("input")) input.checked = Boolean(settings[input.dataset.setting]);
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
    // Only what may be done now: while someone owes, their presses; else the turn's moves.
    if (phase === "play") {
      if (hitter !== null && !v.classic) {
        if (v.button.box) buttons.push(button(T.press_for(name(hitter)), { word: "press" }, { primary: true }));
        else for (let n = 0; n <= page.table.max_fired; n++) buttons.push(button(n === 0 ? T.dry : T.fired_n(n), { word: "fired", count: n }, { primary: n === 0 }));
      } else if (hitter !== null && !v.button.box) {
        for (let n = 0; n <= page.table.max_fired; n++) buttons.push(button(T.dealt_n(n), { word: "fired", count: n }));
      }
      if (hitter === null) {
        buttons.push(v.classic ? button(T.draw, { word: "draw" }) : button(T.hit, { word: "hit" }), button(T.pass, { word: "pass" }));
      }
      if (unoApplies(v)) buttons.push(button(T.uno, { word: "uno" }));
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
    // "say UNO with this card": only for the card that leaves one in the hand.
    const withUno = phase === "play" && hitter === null && v.hands[v.turn] === 2;
    $("uno-toggle").hidden = !withUno;
    if (!withUno) $("with-uno").checked = false;
    $("picker").hidden = !(phase === "deal" || phase === "play" || phase === "score");
    const who = $("who");
    if (who.options.length !== v.players.length) {
      who.replaceChildren(...v.players.map((p) => el("option", { value: p, text: p })));
      $("by").replaceChildren(el("option", { value: "", text: T.nobody }), ...v.players.map((p) => el("option", { value: p, text: p })));
    }
  }

  // UNO is called with one card left (late, in the catch window) or with the card that leaves it.
  function unoApplies(v) {
    if (v.uno && !v.uno.called) return true;
    return v.hitter === null && v.hands[v.turn] <= 2;
  }

  connect();
})();
