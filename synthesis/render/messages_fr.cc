#include "synthesis/render/messages.h"

namespace benchfleet::synthesis {

const Messages& MessagesFr() {
  static const Messages m{
      .title = "Guide de dimensionnement",
      .simulated = "SIMULÉ",
      .simulated_note = "**Attention :** certains de ces enregistrements sont simulés ; les chiffres ne décrivent "
                        "pas un matériel réel.",
      .sources_note = "Chaque chiffre est suivi de l'identifiant de sa source, par ex. `[S3]`. Le fichier "
                      "`sources.csv` liste chaque source : ses exécutions, leur provenance (fichier:ligne pour les "
                      "fichiers importés) et, pour un chiffre dérivé, l'opération (min, max, médiane, q1, q3) et "
                      "ses entrées.",
      .numbers_note = "Nombres : 3 chiffres significatifs (la partie entière toujours gardée), virgule décimale. "
                      "La médiane apparaît à partir de 5 exécutions retenues ; au-delà de 20, "
                      "min/q1/médiane/q3/max remplacent la liste.",
      .table_section = "Tableau de synthèse",
      .task = "Tâche",
      .chart_alt = "Chiffre par rang d'appel",
      .col_machine = "Machine",
      .col_backend = "Moteur",
      .col_mode = "Mode",
      .col_matrix = "Matrice",
      .col_phase = "Phase",
      .col_metric = "Mesure",
      .col_runs = "Exécutions retenues (dans l'ordre)",
      .col_range = "Min–max",
      .col_median = "Médiane",
      .col_excluded = "Exécutions exclues",
      .distribution = "distribution",
      .dist_min = "min",
      .dist_q1 = "q1",
      .dist_median = "médiane",
      .dist_q3 = "q3",
      .dist_max = "max",
      .none_value = "—",
      .phase_validation = "validation",
      .phase_cold = "à froid",
      .phase_warm = "à chaud",
      .phase_unspecified = "non précisée",
      .traps_section = "Pièges",
      .cache_hits = "Résultats servis par un cache (exclus)",
      .throughput_drops = "Chutes de débit",
      .failed_runs = "Exécutions en échec",
      .other_flags = "Autres signalements",
      .no_trap = "Aucun.",
      .run = "exécution",
      .call = "appel",
      .chart_title = "Chiffre par rang d'appel",
      .chart_desc = "Une ligne par cellule (machine, moteur, mode, matrice, phase) : le chiffre des exécutions "
                    "retenues selon le rang d'appel. Cercles : à chaud ; carrés : à froid ; triangles : autres phases.",
      .x_axis = "Rang d'appel",
      .legend_warm = "à chaud",
      .legend_cold = "à froid",
      .legend_other = "autre",
  };
  return m;
}

}  // namespace benchfleet::synthesis
