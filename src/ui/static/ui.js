// toggle-admin's admin page: a little help on the variants form. Everything works without it.
(function () {
  "use strict";
  var table = document.querySelector("table.variants");
  if (!table) { return; }

  function rows() { return Array.prototype.slice.call(table.querySelectorAll("tbody tr.variant")); }
  function field(row, role) { return row.querySelector("[data-role=" + role + "]"); }

  // The shares as the server will compute them: fixed variants keep their weight, the
  // variable ones split what is left of 100 % evenly, the first ones taking the remainder's
  // tenths of a percent.
  function update() {
    var live = rows().filter(function (row) {
      var remove = field(row, "remove");
      var name = field(row, "name");
      return !(remove && remove.checked) && name && name.value.trim() !== "";
    });
    var fixed = 0, variable = [];
    live.forEach(function (row) {
      if (field(row, "weightType").value === "fix") {
        var w = Math.round(parseFloat(field(row, "weight").value) * 10);
        fixed += isFinite(w) ? w : 0;
      } else {
        variable.push(row);
      }
    });
    var rest = 1000 - fixed;
    var base = variable.length ? Math.floor(rest / variable.length) : 0;
    var remainder = variable.length ? rest % variable.length : 0;
    rows().forEach(function (row) {
      var out = row.querySelector(".share");
      if (!out) { return; }
      var i = live.indexOf(row);
      if (i < 0) { out.textContent = "–"; return; }
      var permille;
      if (field(row, "weightType").value === "fix") {
        permille = Math.round(parseFloat(field(row, "weight").value) * 10);
      } else {
        permille = base + (variable.indexOf(row) < remainder ? 1 : 0);
      }
      out.textContent = isFinite(permille) ? (permille / 10).toFixed(1) + " %" : "?";
    });
    var total = document.getElementById("share-total");
    if (total) {
      total.textContent = rest < 0 ? "The fixed weights are over 100 %." :
        (variable.length === 0 && live.length > 0 ? "At least one variant must be variable." : "");
    }
  }

  table.addEventListener("input", update);
  table.addEventListener("change", update);

  // "Add a variant" without a round trip: copy the blank row, with the next index.
  var add = document.getElementById("add-row");
  var count = document.querySelector("input[name=rows]");
  if (add && count) {
    add.addEventListener("click", function (event) {
      var all = rows();
      var last = all[all.length - 1];
      if (!last) { return; }
      event.preventDefault();
      var n = parseInt(count.value, 10);
      var copy = last.cloneNode(true);
      Array.prototype.forEach.call(copy.querySelectorAll("[name],[id],[for]"), function (el) {
        ["name", "id", "for"].forEach(function (attr) {
          var v = el.getAttribute(attr);
          if (v) { el.setAttribute(attr, v.replace(/^v\d+\./, "v" + n + ".")); }
        });
        if (el.tagName === "INPUT" && el.type === "checkbox") { el.checked = false; }
        else if (el.tagName === "INPUT" && el.name && /\.(name|weight|stickiness)$/.test(el.name)) {
          el.value = /stickiness$/.test(el.name) ? "default" : "";
        } else if (el.tagName === "TEXTAREA") { el.value = ""; }
      });
      Array.prototype.forEach.call(copy.querySelectorAll(".field-error"), function (el) { el.remove(); });
      last.parentNode.appendChild(copy);
      count.value = String(n + 1);
      var first = copy.querySelector("input[type=text]");
      if (first) { first.focus(); }
      update();
    });
  }
  update();
})();

// The strategy form: the rollout's share follows the number typed, and a changed constraint
// field or operator redraws the form through its own "Update the form" button (which saves
// nothing), so the values take the widget that field and operator need.
(function () {
  "use strict";
  var form = document.querySelector("form.editor");
  if (!form) { return; }
  function share(input) {
    var out = document.getElementById(input.id + ".share");
    if (!out) { return; }
    var p = Number(input.value);
    var stickiness = form.querySelector("[data-role=stickiness]");
    var who = "of users";
    if (stickiness && stickiness.value === "sessionId") { who = "of sessions"; }
    else if (stickiness && stickiness.value === "random") { who = "of requests, at random"; }
    else if (stickiness && ["default", "userId"].indexOf(stickiness.value) < 0) { who = "by " + stickiness.value; }
    out.textContent = input.value.trim() !== "" && isFinite(p) && p >= 0 && p <= 100 ?
      p + " % " + who : "not a percentage 0–100";
  }
  form.addEventListener("input", function (event) {
    if (event.target.getAttribute("data-role") === "rollout") { share(event.target); }
  });
  form.addEventListener("change", function (event) {
    var role = event.target.getAttribute("data-role");
    if (role === "stickiness") {
      Array.prototype.forEach.call(form.querySelectorAll("[data-role=rollout]"), share);
    } else if (role === "refresh") {
      var refresh = document.getElementById("refresh");
      if (refresh && form.requestSubmit) { form.requestSubmit(refresh); }
    }
  });
})();
